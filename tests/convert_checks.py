"""Offline validation of converter output against the real client libraries' own types."""

from functools import lru_cache

from pydantic import TypeAdapter


def _consume(value):
    """TypedDict fields typed ``Iterable[...]`` validate lazily; walking them forces the check."""
    if isinstance(value, dict):
        for item in value.values():
            _consume(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _consume(item)
    elif hasattr(value, "__iter__") and not isinstance(value, (str, bytes)):
        for item in value:
            _consume(item)


@lru_cache(maxsize=None)
def _adapter(kind):
    if kind == "openai":
        from openai.types.chat import ChatCompletionMessageParam

        return TypeAdapter(ChatCompletionMessageParam)
    if kind == "anthropic":
        from anthropic.types import MessageParam

        return TypeAdapter(MessageParam)
    from anthropic.types import TextBlockParam

    return TypeAdapter(TextBlockParam)


def check_openai(messages):
    for message in messages:
        _consume(_adapter("openai").validate_python(message))


def check_anthropic(system, messages):
    for block in system:
        _consume(_adapter("anthropic_system").validate_python(block))
    for message in messages:
        _consume(_adapter("anthropic").validate_python(message))


@lru_cache(maxsize=None)
def _converse_shape():
    import botocore.session

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return model.operation_model("Converse").input_shape


def check_bedrock(system, messages):
    from botocore.validate import ParamValidator

    params = {"modelId": "anthropic.claude-3-5-sonnet", "messages": messages}
    if system:
        params["system"] = system
    report = ParamValidator().validate(params, _converse_shape())
    assert not report.has_errors(), report.generate_report()
