"""The plain-Python way to count a whole OpenAI request by the same rules as
``agentmsg.count_request_tokens``: tiktoken for the texts, the cookbook's chat and tool rules in
Python, and each image decoded from its data URL whole before its header is read (what code that
hands the bytes to an image library does).

Only the parts the benchmark's request has are implemented: text messages, function tools with
flat parameters, and high-detail PNG images for a tile model.
"""

from __future__ import annotations

import base64
import math
import struct
from typing import Any, Dict, List

import tiktoken_oracle


class PlainPythonRequestCounter:
    """Counts a Chat Completions request as ``count_request_tokens(request).total`` does."""

    def __init__(self, encoding: str = "o200k_base") -> None:
        self.encoding = tiktoken_oracle.encoding(encoding)

    def tokens(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    def messages(self, messages: List[Dict[str, Any]]) -> int:
        total = 3  # reply priming
        for message in messages:
            total += 3 + self.tokens(message["role"])
            content = message.get("content")
            if isinstance(content, str):
                total += self.tokens(content)
            else:
                for part in content or ():
                    if part.get("type") == "text":
                        total += self.tokens(part["text"])
                    elif part.get("type") == "image_url":
                        total += self.image(part["image_url"]["url"])
        return total

    def image(self, url: str) -> int:
        data = base64.b64decode(url.split(",", 1)[1])
        width, height = struct.unpack(">II", data[16:24])
        scale = min(1.0, 2048 / max(width, height))
        width, height = width * scale, height * scale
        scale = min(1.0, 768 / min(width, height))
        width, height = width * scale, height * scale
        return 85 + 170 * math.ceil(width / 512 - 1e-6) * math.ceil(height / 512 - 1e-6)

    def tools(self, tools: List[Dict[str, Any]]) -> int:
        if not tools:
            return 0
        total = 12
        for tool in tools:
            function = tool["function"]
            description = function.get("description", "")
            total += 7 + self.tokens(function["name"] + ":" + description.removesuffix("."))
            properties = function.get("parameters", {}).get("properties", {})
            if properties:
                total += 3
                for key, schema in properties.items():
                    total += 3
                    if "enum" in schema:
                        total -= 3
                        for item in schema["enum"]:
                            total += 3 + self.tokens(str(item))
                    text = str(schema.get("description", "")).removesuffix(".")
                    total += self.tokens(f"{key}:{schema.get('type', '')}:{text}")
        return total

    def count(self, request: Dict[str, Any]) -> int:
        return self.messages(request["messages"]) + self.tools(request.get("tools") or [])
