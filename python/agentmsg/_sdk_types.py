"""The provider SDKs' request types that the converters' outputs are, for type checkers only.

The names exist only under ``TYPE_CHECKING``: agentmsg never imports an SDK at run time, and a
type checker without the SDK installed sees them as ``Any``. A converter imports them the same
way, so ``to_openai(...)`` type-checks as the ``messages`` of
``OpenAI().chat.completions.create`` and ``to_anthropic(...)`` as the ``system`` and
``messages`` of ``Anthropic().messages.create``. (Bedrock has no typed request in boto3 itself;
its types live in the separate ``mypy-boto3-bedrock-runtime`` stubs, so ``to_bedrock`` stays
``dict``-typed.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeAlias

    from anthropic.types import MessageParam, TextBlockParam
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.responses import ResponseInputItemParam

    OpenAIMessageParam: TypeAlias = ChatCompletionMessageParam
    AnthropicMessageParam: TypeAlias = MessageParam
    AnthropicTextBlockParam: TypeAlias = TextBlockParam
    ResponsesInputItemParam: TypeAlias = ResponseInputItemParam
    # What to_anthropic returns: the `system` and `messages` of Anthropic().messages.create.
    AnthropicSystemAndMessages: TypeAlias = "tuple[list[TextBlockParam], list[MessageParam]]"
