"""Adversarial texts for the parser: shapes that make a naive scanner rescan its input.

Each family maps ``n`` (a number of repeats) to a text whose length grows linearly with ``n``.
The tests (``tests/test_parsing_linear.py``) and the benchmarks (``benches/bench_adversarial.py``)
time ``n`` against ``8n``: the parser promises linear time, so the ratio stays near 8.

    >>> FAMILIES["task_boxes"](2)
    '[ ] task\\n[ ] task\\n'
    >>> sorted(ISSUE_FAMILIES) == sorted(set(ISSUE_FAMILIES) & set(FAMILIES))
    True
"""

from __future__ import annotations

from typing import Callable, Dict


def repeated(unit: str) -> Callable[[int], str]:
    """A family of ``unit`` repeated ``n`` times."""
    return lambda n: unit * n


def inside(before: str, unit: str, after: str) -> Callable[[int], str]:
    """A family of ``unit`` repeated ``n`` times between ``before`` and ``after``."""
    return lambda n: before + unit * n + after


XML_CALL = "<tool><tool_name>t</tool_name><arguments><a>", "</a></arguments></tool>"

# The shapes that were quadratic in whole-text parsing, or superlinear in memory allocation.
ISSUE_FAMILIES: Dict[str, Callable[[int], str]] = {
    "task_boxes": repeated("[ ] task\n"),
    "checked_boxes": repeated("[x] y\n"),
    "citations": repeated("[1] cite\n"),
    "unclosed_brackets": repeated("[a\n"),
    "log_lines": repeated("[INFO] server started\n"),
    "xml_ampersands": inside(XML_CALL[0], "&", XML_CALL[1]),
    "empty_calls": repeated("<tool></tool>"),
    "empty_thinking": repeated("<think></think>"),
}

FAMILIES: Dict[str, Callable[[int], str]] = {
    **ISSUE_FAMILIES,
    # Bracket lines of every kind that is not a thought, and near-thoughts.
    "links": repeated("[docs](https://x.y) see\n"),
    "reference_definitions": repeated("[x]: https://x.y\n"),
    "two_brackets": repeated("[a] and [b]\n"),
    "json_arrays": repeated('["a", 1, {"k": [2]}]\n'),
    "empty_brackets": repeated("[]\n"),
    "citation_ranges": repeated("[2, 3-5]\n"),
    "indented_task_boxes": repeated(" \t[ ] task\n"),
    "crlf_task_boxes": repeated("[ ] task\r\n"),
    "nested_open_brackets": repeated("[[[a]\n"),
    "thoughts": repeated("[thinking about it]\n"),
    "bracket_then_tag": repeated("[a] <b\n"),
    "brackets_without_newlines": repeated("[a] "),
    # Near-tags in text and in thinking.
    "lone_angles": repeated("<"),
    "near_tool": repeated("<too"),
    "near_think_close": repeated("</thin"),
    "near_thinking": repeated("<thinking "),
    "closing_tags_without_opener": repeated("</think>"),
    "angles_in_thinking": inside("<think>", "</thin <think", "</think>"),
    "unclosed_thinking": inside("<thinking>", "a </think> ", ""),
    "bracket_near_tags": repeated("[<tool\n"),
    "thinking_tags_in_brackets": repeated("[<think>]\n"),
    # Fences.
    "fences": repeated("```\n"),
    "fence_with_info": repeated("```py\nx\n"),
    "crlf_fences": repeated("~~~\r\n[a]\r\n"),
    "unclosed_fence_lines": inside("````\n", "``` x\n[a]\n<tool>\n", ""),
    "mixed_fence_chars": repeated("~~~\n```\n"),
    # JSON payloads: escapes, strings, unclosed calls.
    "escapes_in_string": inside('<tool>{"tool_name": "t", "arguments": {"a": "', '\\\\\\"', '"}}</tool>'),
    "close_tags_in_string": inside('<tool>{"a": "', "</tool>", ""),
    "unclosed_calls": repeated("<tool>{"),
    "good_calls": repeated('<tool>{"tool_name": "t", "arguments": {"k": 1}}</tool>\n'),
    "invalid_json_calls": repeated('<tool>{"tool_name": </tool>'),
    "nested_open_braces": inside("<tool>", "{", "</tool>"),
    "string_swallowed_calls": repeated('<tool>{"a": "</tool>x'),
    # XML payloads: entities, near-entities, CDATA, comments, elements.
    "entities": inside(XML_CALL[0], "&amp;&#x41;&#65;", XML_CALL[1]),
    "near_entities": inside(XML_CALL[0], "&am &#x4 &#1234567890123;", XML_CALL[1]),
    "angles_in_xml_text": inside(XML_CALL[0], "a < b ", XML_CALL[1]),
    "cdata_sections": inside(XML_CALL[0], "<![CDATA[x]]>", XML_CALL[1]),
    "cdata_brackets": inside("<tool><a><![CDATA[", "]]", "]]></a></tool>"),
    "comments": inside(XML_CALL[0], "<!-- c -->", XML_CALL[1]),
    "repeated_elements": inside("<tool><tool_name>t</tool_name><arguments>", "<a>1</a>", "</arguments></tool>"),
    "empty_elements": inside("<tool><tool_name>t</tool_name><arguments>", "<a/>", "</arguments></tool>"),
    "unclosed_elements": inside("<tool>", "<a>", "</tool>"),
    "stray_end_tags": inside("<tool>", "</a>", "</tool>"),
    "unclosed_cdata": inside("<tool><a>", "<![CDATA[", "</tool>"),
    "xml_calls": repeated("<tool><tool_name>t</tool_name><arguments><a>1</a></arguments></tool>\n"),
}
