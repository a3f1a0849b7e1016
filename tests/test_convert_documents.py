"""Documents (a PDF, a plain-text file...) as DocumentBlock in every format that has them:
Anthropic's ``document``, Chat Completions' ``file``, the Responses API's ``input_file``,
Gemini's ``inlineData`` / ``fileData`` of a document type, Bedrock's ``document``, LangChain's
v1 ``file`` and an MCP resource blob. Each format reads its own shape and writes it back
exactly, checked with the SDKs' own types; a document goes from one format to another as a
document, never as an image; what a format cannot carry is left out with a warning."""

import base64
import copy
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import (
    Base64Source,
    ConversionError,
    ConversionWarning,
    DocumentBlock,
    Message,
    TextBlock,
    URLSource,
)
from convert_checks import check_anthropic, check_bedrock, check_openai
from test_convert_responses import check_responses
from convert_strategies import nonempty_text

PDF = "JVBERi0xLjQK"  # "%PDF-1.4\n"
PDF_URL = "data:application/pdf;base64," + PDF


def recorded(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, ConversionWarning)]


def check_gemini(contents):
    from google.genai import types

    for content in contents:
        types.Content.model_validate(content)


# -- each format's own shape, read and written back ----------------------------------------------

ANTHROPIC = [{"role": "user", "content": [
    {"type": "text", "text": "Compare these."},
    {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
     "title": "Q3 report", "context": "Finance", "citations": {"enabled": True}},
    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Plain notes, é ✓"}},
    {"type": "document", "source": {"type": "url", "url": "https://e.com/q2.pdf"}},
]}]


def test_anthropic_documents_read_into_blocks_and_go_back_exactly():
    check_anthropic([], ANTHROPIC)
    messages = agentmsg.from_anthropic(None, copy.deepcopy(ANTHROPIC))
    notes = base64.b64encode("Plain notes, é ✓".encode()).decode()
    assert messages[0].content == (
        TextBlock("Compare these."),
        DocumentBlock(Base64Source("application/pdf", PDF), "Q3 report",
                      {"context": "Finance", "citations": {"enabled": True}}),
        DocumentBlock(Base64Source("text/plain", notes)),
        DocumentBlock(URLSource("https://e.com/q2.pdf")),
    )
    (system, turns), said = recorded(agentmsg.to_anthropic, messages)
    assert (system, turns, said) == ([], ANTHROPIC, [])


def test_anthropic_tool_results_carry_documents():
    turns = [{"role": "user", "content": [{"type": "text", "text": "Fetch it"}]},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fetch", "input": {}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
                 {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}]}]}]
    check_anthropic([], turns)
    messages = agentmsg.from_anthropic(None, copy.deepcopy(turns))
    assert messages[2].content[0].output == (DocumentBlock(Base64Source("application/pdf", PDF)),)
    assert agentmsg.to_anthropic(messages) == ([], turns)


def test_chat_completions_file_parts_read_and_go_back_exactly():
    chat = [{"role": "user", "content": [{"type": "text", "text": "Summarize"},
                                         {"type": "file", "file": {"filename": "q3.pdf", "file_data": PDF_URL}}]}]
    check_openai(chat)
    messages = agentmsg.from_openai(copy.deepcopy(chat))
    assert messages[0].content[1] == DocumentBlock(Base64Source("application/pdf", PDF), "q3.pdf")
    assert recorded(agentmsg.to_openai, messages) == (chat, [])


def test_responses_input_files_read_and_go_back_exactly():
    items = [{"role": "user", "content": [
        {"type": "input_text", "text": "Summarize"},
        {"type": "input_file", "file_data": PDF_URL, "filename": "q3.pdf"},
        {"type": "input_file", "file_url": "https://e.com/q2.pdf"},
        {"type": "input_file", "file_id": "file-abc"},  # OpenAI's store: kept in the item, no block
    ]}]
    check_responses(items)
    messages = agentmsg.from_responses(copy.deepcopy(items))
    assert messages[0].content[1:] == (DocumentBlock(Base64Source("application/pdf", PDF), "q3.pdf"),
                                       DocumentBlock(URLSource("https://e.com/q2.pdf")))
    assert recorded(agentmsg.to_responses, messages) == (items, [])


def test_gemini_document_parts_read_as_documents_not_images():
    contents = [{"role": "user", "parts": [
        {"text": "Summarize"},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "https://e.com/q2.pdf"}},
    ]}]
    check_gemini(contents)
    messages = agentmsg.from_gemini(copy.deepcopy(contents))
    assert messages[0].content[1:] == (DocumentBlock(Base64Source("application/pdf", PDF)),
                                       DocumentBlock(URLSource("https://e.com/q2.pdf")))
    assert recorded(agentmsg.to_gemini, messages) == ((None, contents), [])


def test_bedrock_documents_read_and_go_back_exactly():
    turns = [{"role": "user", "content": [
        {"text": "Summarize"},
        {"document": {"format": "pdf", "name": "Q3 report", "source": {"bytes": base64.b64decode(PDF)}}},
        {"document": {"format": "csv", "name": "sales (2026)", "source": {"bytes": b"a,b\n1,2\n"}}},
    ]}]
    check_bedrock([], turns)
    messages = agentmsg.from_bedrock([], copy.deepcopy(turns))
    assert messages[0].content[1] == DocumentBlock(Base64Source("application/pdf", PDF), "Q3 report")
    assert messages[0].content[2].source.media_type == "text/csv"
    assert recorded(agentmsg.to_bedrock, messages) == (([], turns), [])


def test_langchain_agentscope_and_block_dicts_keep_every_field():
    from agentmsg import langchain as lc

    document = DocumentBlock(Base64Source("application/pdf", PDF), "q3.pdf", {"context": "Finance"})
    messages = [Message.user([TextBlock("Summarize"), document, DocumentBlock(URLSource("https://e.com/a.pdf"))])]
    assert lc.to_langchain(messages)[0].content[1] == {
        "type": "file", "base64": PDF, "mime_type": "application/pdf",
        "extras": {"filename": "q3.pdf", "metadata": {"context": "Finance"}}}
    assert lc.from_langchain(lc.to_langchain(messages))[0].content == messages[0].content
    from langchain_core.messages import HumanMessage

    v0 = [HumanMessage([{"type": "file", "source_type": "base64", "data": PDF, "mime_type": "application/pdf",
                         "metadata": {"filename": "q3.pdf"}},
                        {"type": "file", "source_type": "url", "url": "https://e.com/a.pdf", "filename": "a.pdf"}])]
    assert lc.from_langchain(v0)[0].content == (DocumentBlock(Base64Source("application/pdf", PDF), "q3.pdf"),
                                                DocumentBlock(URLSource("https://e.com/a.pdf"), "a.pdf"))
    assert agentmsg.from_agentscope(agentmsg.to_agentscope(messages))[0].content == messages[0].content
    assert agentmsg.block_from_dict(agentmsg.block_to_dict(document)) == document


# -- between formats ------------------------------------------------------------------------------


def test_a_gemini_pdf_reaches_every_provider_as_a_document():
    """It read as an image before, and went to OpenAI as an image_url of a PDF (a 400)."""
    messages = agentmsg.from_gemini([{"role": "user", "parts": [
        {"text": "Summarize"}, {"inlineData": {"mimeType": "application/pdf", "data": PDF}}]}])
    chat, said = recorded(agentmsg.to_openai, messages)
    assert chat[0]["content"][1] == {"type": "file", "file": {"filename": "document.pdf", "file_data": PDF_URL}}
    assert said == []
    check_openai(chat)
    (system, turns), said = recorded(agentmsg.to_anthropic, messages)
    assert turns[0]["content"][1] == {"type": "document", "source": {
        "type": "base64", "media_type": "application/pdf", "data": PDF}}
    check_anthropic(system, turns)
    items, said = recorded(agentmsg.to_responses, messages)
    assert items[0]["content"][1] == {"type": "input_file", "filename": "document.pdf", "file_data": PDF_URL}
    check_responses(items)
    (system, turns), said = recorded(agentmsg.to_bedrock, messages)
    assert turns[0]["content"][1] == {"document": {"format": "pdf", "name": "document",
                                                   "source": {"bytes": base64.b64decode(PDF)}}}
    check_bedrock(system, turns)


def test_what_a_format_cannot_carry_is_left_out_and_said():
    url_doc = DocumentBlock(URLSource("https://e.com/a.pdf"), "a.pdf")
    sheet = DocumentBlock(Base64Source("application/vnd.ms-excel", "AAAA"))
    history = [Message.user([TextBlock("Read"), url_doc, sheet])]
    chat, said = recorded(agentmsg.to_openai, history)
    assert chat == [{"role": "user", "content": "Read"}]
    assert said == ["to_openai cannot carry documents other than base64 PDFs in user messages (message 0); "
                    "they were left out"]
    (_, turns), said = recorded(agentmsg.to_anthropic, history)
    assert [b["type"] for b in turns[0]["content"]] == ["text", "document"]
    assert len(said) == 1 and "documents other than PDFs and plain text" in said[0]
    (_, turns), said = recorded(agentmsg.to_bedrock, history)
    assert [list(b) for b in turns[0]["content"]] == [["text"], ["document"]]
    assert said == ["to_bedrock cannot carry document given by URL (message 0); they were left out"]
    out, said = recorded(agentmsg.to_dashscope, history)
    assert out == [{"role": "user", "content": "Read"}]
    assert said == ["to_dashscope cannot carry documents (message 0); they were left out"]
    _, said = recorded(agentmsg.to_gemini, history)
    assert said == ["to_gemini cannot carry a document's name or metadata (message 0); they were left out"]


def test_a_documents_metadata_never_stands_in_for_its_own_fields():
    document = DocumentBlock(Base64Source("application/pdf", PDF), "q3", {"type": "x", "source": 1, "context": "c"})
    (_, turns), said = recorded(agentmsg.to_anthropic, [Message.user([document])])
    assert turns[0]["content"] == [{"context": "c", "type": "document", "title": "q3", "source": {
        "type": "base64", "media_type": "application/pdf", "data": PDF}}]
    assert said == ["to_anthropic cannot carry document metadata named type, source or title (message 0); "
                    "they were left out"]


def test_bedrock_names_keep_only_the_characters_converse_allows():
    history = [Message.user([DocumentBlock(Base64Source("application/pdf", PDF), "Q3 (final).pdf")])]
    (system, turns), said = recorded(agentmsg.to_bedrock, history)
    assert (turns[0]["content"][0]["document"]["name"], said) == ("Q3 (final)", [])  # the format holds ".pdf"
    history = [Message.user([DocumentBlock(Base64Source("application/pdf", PDF), "Q3  report_v2.pdf")])]
    (system, turns), said = recorded(agentmsg.to_bedrock, history)
    assert turns[0]["content"][0]["document"]["name"] == "Q3 -report-v2"
    assert said == ["to_bedrock cannot carry the exact document names (characters Converse refuses became "
                    "hyphens) (message 0); they were left out"]
    check_bedrock(system, turns)


def test_documents_that_are_not_read_name_why():
    with pytest.raises(ConversionError, match=r"messages\[0\]\.content\[0\]\.file: a file sent only by file_id "
                                              r"is not read"):
        agentmsg.from_openai([{"role": "user", "content": [{"type": "file", "file": {"file_id": "file-1"}}]}])
    with pytest.raises(ConversionError, match=r"file_data must be a data URL"):
        agentmsg.from_openai([{"role": "user", "content": [{"type": "file", "file": {
            "file_data": "https://e.com/a.pdf"}}]}])
    with pytest.raises(ConversionError, match=r"messages\[0\]\.content\[0\]\.source: a document of source type "
                                              r"'file' is not read"):
        agentmsg.from_anthropic(None, [{"role": "user", "content": [
            {"type": "document", "source": {"type": "file", "file_id": "file_1"}}]}])
    with pytest.raises(ConversionError, match=r"messages\[0\]\.content\[0\]\.source\.media_type: a text document "
                                              r"is 'text/plain', not 'text/markdown'"):
        agentmsg.from_anthropic(None, [{"role": "user", "content": [
            {"type": "document", "source": {"type": "text", "media_type": "text/markdown", "data": "# hi"}}]}])
    with pytest.raises(ConversionError, match=r"source\.data: surrogates not allowed at 1"):
        agentmsg.from_anthropic(None, [{"role": "user", "content": [
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a\ud800b"}}]}])
    with pytest.raises(agentmsg.MessageTypeError, match=r"DocumentBlock.name must be a str, not int"):
        DocumentBlock(Base64Source("application/pdf", PDF), 3)
    with pytest.raises(agentmsg.MessageTypeError, match=r"DocumentBlock.metadata\['a'\] must be a JSON value"):
        DocumentBlock(Base64Source("application/pdf", PDF), None, {"a": {1}})


def test_an_mcp_pdf_blob_is_a_document_named_by_its_uri():
    message = agentmsg.from_mcp_result({"content": [{"type": "resource", "resource": {
        "uri": "file:///q3.pdf", "mimeType": "application/pdf", "blob": PDF}}]}, tool_id="t1")
    assert message.content[0].output == (DocumentBlock(Base64Source("application/pdf", PDF), "file:///q3.pdf"),)


# -- property tests -------------------------------------------------------------------------------

pdf_data = st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b"%PDF-" + b).decode())
plain_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)
titles = st.none() | nonempty_text
anthropic_documents = st.one_of(
    st.builds(lambda d, t: {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                            "data": d}, **({"title": t} if t else {})},
              pdf_data, titles),
    st.builds(lambda d: {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": d}},
              plain_text),
    st.builds(lambda u: {"type": "document", "source": {"type": "url", "url": "https://e.com/" + u}},
              st.text("abcxyz019", min_size=1, max_size=8)),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(anthropic_documents, min_size=1, max_size=3))
def test_anthropic_documents_round_trip_through_every_format_that_carries_them(documents):
    turns = [{"role": "user", "content": [{"type": "text", "text": "q"}] + documents}]
    check_anthropic([], turns)
    messages = agentmsg.from_anthropic(None, copy.deepcopy(turns))
    assert agentmsg.to_anthropic(messages) == ([], turns)
    from agentmsg import langchain as lc

    assert lc.from_langchain(lc.to_langchain(messages))[0].content == messages[0].content
    assert agentmsg.from_agentscope(agentmsg.to_agentscope(messages))[0].content == messages[0].content
    items, said = recorded(agentmsg.to_responses, messages)
    assert said == []
    check_responses(items)
    back = agentmsg.from_responses(items)[0].content
    # the Responses API names every base64 file: a document without one comes back named
    def unnamed(blocks):
        return [DocumentBlock(b.source) if type(b) is DocumentBlock else b for b in blocks]

    assert unnamed(back) == unnamed(messages[0].content)
