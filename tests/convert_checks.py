"""Offline validation of converter output against the real client libraries' own types."""

from functools import lru_cache

from pydantic import TypeAdapter

from agentmsg import TextBlock, ToolUseBlock


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


def full_stream(messages):
    """Everything the messages say, as the role-merged stream Anthropic sees."""
    system, turns = [], []
    for message in messages:
        role = message.role.value
        extras = [("name", message.name)] if message.name is not None and role != "tool" else []
        if message.reasoning_content is not None:
            extras.append(("reasoning", message.reasoning_content))
        if role == "system":
            system.extend(b if not isinstance(b, TextBlock) else b.text for b in message.content
                          if not (isinstance(b, TextBlock) and not b.text))
            system.extend(extras)
            continue
        if role == "tool":
            result = message.content[0]
            output = tuple(b for b in result.output if not (isinstance(b, TextBlock) and not b.text))
            items = [("result", message.tool_id, result.is_error, output)]
            role = "user"
        else:
            items = [(b.id, b.name, b.input, b.server_name, b.metadata) if isinstance(b, ToolUseBlock) else b
                     for b in message.content if not (isinstance(b, TextBlock) and not b.text)]
        items += extras
        add_turn(turns, role, items)
    return system, turns


def add_turn(turns, role, items):
    """Adds ``items`` to the stream of turns: to the last turn when it has the same role (the
    providers merge consecutive turns of one role), else as a new turn; nothing when empty."""
    if not items:
        return
    if turns and turns[-1][0] == role:
        turns[-1][1].extend(items)
    else:
        turns.append((role, items))
