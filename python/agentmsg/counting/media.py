"""What images and documents cost in tokens, by each provider's published rule, and their sizes
read from the bytes' own headers (PNG, JPEG, GIF, WebP; PDF page counts), with no image library.

    >>> openai_image_tokens(1024, 1024, "high")
    765
    >>> openai_image_tokens(2048, 4096, "high"), openai_image_tokens(4096, 8192, "low")
    (1105, 85)
    >>> openai_image_tokens(1800, 2400, "high", model="gpt-4.1-mini")  # 1452 patches x 1.62
    2353
    >>> anthropic_image_tokens(1000, 1000), gemini_image_tokens(384, 384)
    (1334, 258)
    >>> image_size(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000320000002580806000000"))
    (800, 600)
"""

from __future__ import annotations

import binascii
import math
import re
import struct
from typing import Optional, Tuple

from .._checks import check_calls, describe, require_int, require_str
from ..errors import MessageError

__all__ = ["image_size", "data_url_bytes", "pdf_page_count", "openai_image_tokens", "openai_image_rule",
           "openai_image_patches", "MEASURED_PATCH_MULTIPLIERS",
           "anthropic_image_tokens", "gemini_image_tokens"]

# -- sizes from headers ----------------------------------------------------------------------------

_PNG = b"\x89PNG\r\n\x1a\n"
# JPEG start-of-frame markers (baseline, progressive, lossless, ...): not DHT (C4), JPG (C8), DAC (CC).
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# JPEG markers that stand alone, with no length after them.
_JPEG_BARE = frozenset(range(0xD0, 0xDA)) | {0x01}


def image_size(data: bytes) -> Optional[Tuple[int, int]]:
    """``(width, height)`` of a PNG, JPEG, GIF or WebP image read from its header, or None when
    the bytes are none of these (or are cut before the size).

    >>> image_size(b"GIF89a" + (640).to_bytes(2, "little") + (480).to_bytes(2, "little"))
    (640, 480)
    >>> image_size(b"not an image") is None
    True
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise MessageError(f"image data must be bytes, not {type(data).__name__}")
    if not isinstance(data, bytes):
        data = bytes(data)
    if data[:8] == _PNG and data[12:16] == b"IHDR" and len(data) >= 24:
        return _positive(*struct.unpack(">II", data[16:24]))
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return _positive(*struct.unpack("<HH", data[6:10]))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    return None


def _positive(width: int, height: int) -> Optional[Tuple[int, int]]:
    return (width, height) if width > 0 and height > 0 else None


def _webp_size(data: bytes) -> Optional[Tuple[int, int]]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:  # extended: 24-bit canvas size minus one
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:  # lossless: 14-bit sizes minus one
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":  # lossy key frame
        width, height = struct.unpack("<HH", data[26:30])
        return _positive(width & 0x3FFF, height & 0x3FFF)
    return None


def _jpeg_size(data: bytes) -> Optional[Tuple[int, int]]:
    position = 2
    end = len(data)
    while position + 4 <= end:
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in _JPEG_BARE:
            position += 2
            continue
        length = int.from_bytes(data[position + 2:position + 4], "big")
        if length < 2:
            return None
        if marker in _JPEG_FRAMES:
            if position + 9 > end:
                return None
            height, width = struct.unpack(">HH", data[position + 5:position + 9])
            return _positive(width, height)
        position += 2 + length
    return None


_DATA_URL = re.compile(r"data:([^,;]*)((?:;[^,;]*)*?)(;base64)?,", re.IGNORECASE)


def data_url_bytes(url: str, limit: Optional[int] = None) -> Optional[Tuple[str, bytes]]:
    """``(media type, bytes)`` of a ``data:`` URL (the first ``limit`` bytes at least, when given:
    headers need only the start), or None for any other URL. A ``data:`` URL whose base64 does
    not decode is a :class:`agentmsg.MessageError`.

    >>> data_url_bytes("data:image/png;base64,iVBORw0KGgo=")
    ('image/png', b'\\x89PNG\\r\\n\\x1a\\n')
    >>> data_url_bytes("https://example.com/cat.png") is None
    True
    """
    url = require_str(url, "url")
    match = _DATA_URL.match(url, 0, 4096)
    if match is None:
        return None
    media_type = match.group(1).lower()
    payload = url[match.end():]
    if not match.group(3):
        return media_type, payload.encode("utf-8", "surrogatepass")
    if limit is not None:
        # 4 characters of base64 make 3 bytes; whole quads only, so the cut decodes.
        payload = payload[:(require_int(limit, "limit") // 3 + 1) * 4]
    try:
        data = binascii.a2b_base64(payload.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError):
        data = None
    # a2b_base64 skips characters outside the alphabet: fewer bytes than the text holds means some were.
    if data is None or len(data) != len(payload.rstrip("=")) * 3 // 4:
        raise MessageError(f"the data URL of media type {describe(media_type)} holds no valid base64")
    return media_type, data


def pdf_page_count(data: bytes) -> Optional[int]:
    """The number of pages of a PDF: its page objects (``/Type /Page``), counted in the bytes as
    they are; None for bytes that are not a PDF. Pages inside compressed object streams are not
    seen, so callers treat the count as an estimate.

    >>> pdf_page_count(b"%PDF-1.4 1 0 obj << /Type /Page >> endobj 2 0 obj << /Type/Page >> endobj")
    2
    """
    if not isinstance(data, (bytes, bytearray)) or not data.startswith(b"%PDF"):
        return None
    return len(re.findall(rb"/Type\s*/Page(?![A-Za-z])", data))


# -- OpenAI ----------------------------------------------------------------------------------------

# OpenAI's "Images and vision" guide, "Calculating costs": models billed by 512 px tiles, with
# (tokens of the low-detail image, tokens per tile), longest prefix first.
_TILE_MODELS = (
    ("gpt-4o-mini", (2833, 5667)),
    ("gpt-4o", (85, 170)), ("gpt-4.1", (85, 170)), ("gpt-4.5", (85, 170)), ("gpt-4-turbo", (85, 170)),
    ("gpt-4-vision", (85, 170)), ("chatgpt-4o", (85, 170)),
    ("o1", (75, 150)), ("o3", (75, 150)),
    ("computer-use-preview", (65, 129)),
    ("gpt-5", (70, 140)),
)
# The same guide: models billed by 32 px patches (at most 1536), times a model's multiplier.
# gpt-5-mini and gpt-5-nano are listed at 1.62 and 2.46, but developers measuring the API report
# 1.2 and 1.5 (OpenAI community forum, 2025-2026): counts give that range.
_PATCH_MODELS = (("gpt-4.1-mini", 1.62), ("gpt-4.1-nano", 2.46), ("o4-mini", 1.72),
                 ("gpt-5-mini", 1.62), ("gpt-5-nano", 2.46))
#: The lowest multiplier measured for a patch model, where it differs from the published one.
MEASURED_PATCH_MULTIPLIERS = {"gpt-5-mini": 1.2, "gpt-5-nano": 1.5}
_PATCH = 32
_MAX_PATCHES = 1536


def openai_image_rule(model: str) -> Tuple[str, Tuple[float, ...]]:
    """Which of OpenAI's published image rules applies to ``model``: ``("patches",
    (multiplier,))``, ``("tiles", (base, per_tile))``, or ``("unknown", (85, 170))`` for a model
    the guide does not list (the tile rule of gpt-4o is then the estimate).

    >>> openai_image_rule("gpt-4o-2024-08-06"), openai_image_rule("o4-mini")
    (('tiles', (85, 170)), ('patches', (1.72,)))
    """
    model = require_str(model, "model")
    for prefix, multiplier in _PATCH_MODELS:
        if model.startswith(prefix):
            return "patches", (multiplier,)
    for prefix, costs in _TILE_MODELS:
        if model.startswith(prefix) and not (prefix == "gpt-4o" and model.startswith("gpt-4o-mini")):
            return "tiles", costs
    return "unknown", (85, 170)


def openai_image_tokens(width: int, height: int, detail: str = "high", model: str = "gpt-4o") -> int:
    """The tokens of one image of ``width`` x ``height`` pixels in an OpenAI request, by the
    published rule for ``model`` (see :func:`openai_image_rule`).

    Tile models: ``low`` is the base cost; ``high`` (and ``auto``, billed as ``high``) scales the
    image to fit 2048 x 2048, then its shortest side down to 768, and costs the base plus each
    512 px tile. Patch models: the 32 px patches that cover the image, scaled down to fit 1536
    patches when more, times the model's multiplier (detail does not change it).

    >>> openai_image_tokens(512, 512, "high"), openai_image_tokens(1024, 1024, "high", "o3")
    (255, 675)
    >>> openai_image_tokens(1024, 1024, model="gpt-4.1-nano")  # 1024 patches x 2.46, rounded up
    2520
    """
    width = require_int(width, "width", 1)
    height = require_int(height, "height", 1)
    detail = require_str(detail, "detail")
    if detail not in ("low", "high", "auto"):
        raise MessageError(f"detail must be 'low', 'high' or 'auto', not {detail!r}")
    kind, costs = openai_image_rule(model)
    if kind == "patches":
        return math.ceil(openai_image_patches(width, height) * costs[0] - 1e-9)
    base, per_tile = int(costs[0]), int(costs[1])
    if detail == "low":
        return base
    return base + per_tile * _tiles(width, height)


def _tiles(width: int, height: int) -> int:
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return math.ceil(w / 512 - 1e-6) * math.ceil(h / 512 - 1e-6)


def openai_image_patches(width: int, height: int) -> int:
    """The 32 px patches a patch model sees of an image (at most 1536, after the guide's scaling).

    >>> openai_image_patches(1024, 1024), openai_image_patches(1800, 2400)
    (1024, 1452)
    """
    patches = math.ceil(width / _PATCH) * math.ceil(height / _PATCH)
    if patches <= _MAX_PATCHES:
        return patches
    # The guide's steps: shrink to the budget's area, then shrink again so the width is a whole
    # number of patches, and count the patches that cover the result.
    shrink = math.sqrt(_MAX_PATCHES * _PATCH * _PATCH / (width * height))
    w, h = width * shrink, height * shrink
    fit = math.floor(w / _PATCH) / (w / _PATCH)
    w, h = w * fit, h * fit
    return min(_MAX_PATCHES, math.ceil(w / _PATCH - 1e-6) * math.ceil(h / _PATCH - 1e-6))


# -- Anthropic and Gemini --------------------------------------------------------------------------

#: Anthropic's vision guide: images are scaled to fit 1568 px on the long edge and about 1,600
#: tokens (1.2 megapixels), then cost width x height / 750 tokens.
ANTHROPIC_LONG_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1600 * 750


def anthropic_image_tokens(width: int, height: int) -> int:
    """About how many tokens Anthropic counts for an image: ``width * height / 750`` (rounded up)
    after scaling it to fit 1568 px on the long edge and 1.2 megapixels. Anthropic's guide calls
    the result approximate, so counts that use it are estimates.

    >>> anthropic_image_tokens(200, 200), anthropic_image_tokens(1092, 1092), anthropic_image_tokens(4000, 4000)
    (54, 1590, 1600)
    """
    width = require_int(width, "width", 1)
    height = require_int(height, "height", 1)
    scale = min(1.0, ANTHROPIC_LONG_EDGE / max(width, height))
    scale = min(scale, math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)))
    pixels = (width * scale) * (height * scale)
    return math.ceil(pixels / 750 - 1e-9)


#: Gemini's guide: an image with both sides at most 384 px costs 258 tokens; a larger one is cut
#: into 768 x 768 tiles of 258 tokens each.
GEMINI_IMAGE_TOKENS = 258


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini's tokens for an image: 258 when both sides are at most 384 px, else 258 per
    768 px tile (the guide does not say how tiles are cut, so counts that use it are estimates).

    >>> gemini_image_tokens(1024, 768)
    516
    """
    width = require_int(width, "width", 1)
    height = require_int(height, "height", 1)
    if width <= 384 and height <= 384:
        return GEMINI_IMAGE_TOKENS
    return GEMINI_IMAGE_TOKENS * math.ceil(width / 768) * math.ceil(height / 768)


# Bad calls of this module's public functions raise typed errors (see _checks).
check_calls(globals())
