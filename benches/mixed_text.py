"""A few MB of deterministic multi-script text for the token-count benches.

Lines mix English prose and code from the shared transcripts with words in other scripts
(CJK, Cyrillic, Arabic, Devanagari, Greek), emoji, numbers and whitespace runs, so every branch
of the pre-tokenizing pattern and of the BPE is exercised.
"""

from __future__ import annotations

import random
from typing import List

import transcripts

SCRIPT_WORDS = {
    "cjk": ["日本語", "の", "テキスト", "中文", "字符", "한국어", "문장", "東京", "分词器", "漢字かな交じり"],
    "cyrillic": ["привет", "мир", "токенизатор", "Москва", "данные", "быстро"],
    "arabic": ["مرحبا", "بالعالم", "النص", "العربية", "سريع"],
    "devanagari": ["नमस्ते", "दुनिया", "हिन्दी", "पाठ", "तेज़"],
    "greek": ["γειά", "σου", "κόσμε", "Αθήνα", "λέξη"],
    "emoji": ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️", "🤖🤖🤖", "✨"],
    "numbers": ["42", "3.14159", "2026-11-23", "1,000,000", "0xDEADBEEF", "1e-9"],
    "space": ["  ", "\t", "\n\n", "    ", " \n", "\r\n"],
}


def mixed_text(size: int, seed: int = 0) -> str:
    """About ``size`` characters of mixed text, the same for a given seed."""
    rng = random.Random(seed)
    prose = [m.text for m in transcripts.all_messages() if m.text]
    kinds = list(SCRIPT_WORDS)
    parts: List[str] = []
    length = 0
    while length < size:
        if rng.random() < 0.5:
            source = rng.choice(prose)
            start = rng.randrange(max(1, len(source) - 400))
            piece = source[start : start + rng.randint(40, 400)]
        else:
            words = SCRIPT_WORDS[rng.choice(kinds)]
            piece = " ".join(rng.choice(words) for _ in range(rng.randint(3, 25)))
        parts.append(piece)
        parts.append(rng.choice([" ", "\n", ". ", "\n\n"]))
        length += len(piece) + 1
    return "".join(parts)[:size]
