"""The conversation as a privacy policy lets the model read it: every text and the code of tool
calls with the withheld values replaced, a line saying so in a tool result that lost some, images
dropped unless allowed; with nothing to withhold, the very same messages."""

from analyst.trust.privacy import NO_IMAGE, Policy
from analyst.trust.value_matcher import ValueMatcher
from analyst.turns.agent.private_view import as_model_reads
from analyst.turns.agent.providers import ChatMessage, ImagePart, TextPart, ToolCallPart, ToolResultPart

CHART = ImagePart("image/png", "iVBORw0KGgo=")
MESSAGES = [
    ChatMessage("user", [TextPart("I ran this cell myself:\nIts output:\nAnn Vell")]),
    ChatMessage("assistant", [ToolCallPart("t1", "run_python", {"code": "df[df.name == 'Ann Vell']"})]),
    ChatMessage("user", [ToolResultPart("t1", [TextPart("   name  age\n0  Ann Vell  41"), CHART])]),
]


def test_withheld_values_are_replaced_everywhere_and_said_so():
    policy = Policy(matcher=ValueMatcher({"Ann Vell": "name"}), send_images=False)
    note, call, result = as_model_reads(MESSAGES, policy)
    assert note.parts[0].text.startswith(
        "I ran this cell myself:\nIts output:\n«col:name»\n[privacy: 1 value of name"
    )
    assert call.parts[0].arguments == {"code": "df[df.name == '«col:name»']"}
    texts = [part.text for part in result.parts[0].content]
    assert texts == ["   name  age\n0  «col:name»  41", NO_IMAGE, texts[2]]
    assert texts[2].startswith("[privacy: 1 value of name withheld")
    assert "Ann Vell" in MESSAGES[0].parts[0].text, "the stored conversation is left whole"


def test_images_go_when_allowed_and_nothing_changes_without_values():
    assert as_model_reads(MESSAGES, Policy()) is MESSAGES
    allowed = as_model_reads(MESSAGES, Policy(matcher=ValueMatcher({"Bo Rask": "name"})))
    assert allowed[2].parts[0].content[1] == CHART
    assert allowed[0].parts[0].text == MESSAGES[0].parts[0].text
