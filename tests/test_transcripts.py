"""The shared transcript loader reads every trajectory and builds well-formed long transcripts."""

import transcripts


def test_every_trajectory_loads_with_linked_tool_results():
    messages = transcripts.all_messages()
    assert len(messages) == 24 + 12 + 25 + 26 + 37
    call_ids = {call.id for m in messages for call in m.tool_calls}
    tool_messages = [m for m in messages if m.role == "tool"]
    assert tool_messages and all(m.tool_id in call_ids for m in tool_messages)


def test_build_transcript_has_exact_length_one_system_prompt_and_paired_calls():
    for n in (1, 7, 500, 1234):
        messages = transcripts.build_transcript(n)
        assert len(messages) == n
        assert [m.role for m in messages].count("system") == 1
        answered = {m.tool_id for m in messages if m.role == "tool"}
        called = [call.id for m in messages for call in m.tool_calls]
        assert set(called) == answered
        # Each tool turn is followed by exactly its results (the real data reuses call ids
        # across turns, so pairing is by position, not by a global id lookup).
        for index, message in enumerate(messages):
            if message.has_tool_calls:
                ids = [call.id for call in message.tool_calls]
                following = [m.tool_id for m in messages[index + 1 : index + 1 + len(ids)]]
                assert following == ids
