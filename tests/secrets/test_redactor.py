"""The Redactor: a secret's value and its encoded forms replaced by «secret:NAME», in text, bytes,
nested values and streams cut anywhere; a value too short to hide is left."""

from __future__ import annotations

import asyncio
import base64
import html
import json
from collections.abc import AsyncIterator
from urllib.parse import quote, quote_plus

import pytest

from analyst.connections.redaction import Redactor, redacted_chunks
from sandboxes import Execution, ExecutionError, Result

KEY = "sk-Live_9f8e7d6c5b4a"
PASSWORD = 'p@ss/w:rd&"more+1'


@pytest.fixture
def redactor() -> Redactor:
    return Redactor({"API_KEY": KEY, "warehouse": PASSWORD})


def test_a_value_printed_plain_is_replaced(redactor):
    assert redactor.text(f"key={KEY}\n") == "key=«secret:API_KEY»\n"
    assert redactor.text("nothing secret here") == "nothing secret here"


@pytest.mark.parametrize(
    "form",
    [
        quote(PASSWORD, safe=""),
        quote(PASSWORD),
        quote_plus(PASSWORD),
        json.dumps(PASSWORD)[1:-1],
        html.escape(PASSWORD),
    ],
    ids=["quote", "quote-path", "quote_plus", "json", "html"],
)
def test_url_encoded_and_escaped_forms_are_replaced(redactor, form):
    assert form != PASSWORD
    assert redactor.text(f"postgresql://analyst:{form}@127.0.0.1/db") == (
        "postgresql://analyst:«secret:warehouse»@127.0.0.1/db"
    )


def test_base64_whole_and_inside_a_longer_encoding(redactor):
    whole = base64.b64encode(KEY.encode()).decode()
    assert redactor.text(f"token {whole} end") == "token «secret:API_KEY» end"
    for prefix in ("u:", "us:", "use:"):  # every alignment, as in a Basic-auth header
        header = base64.b64encode(f"{prefix}{PASSWORD}".encode()).decode()
        shown = redactor.text(f"Authorization: Basic {header}")
        assert "«secret:warehouse»" in shown, prefix
        assert len(shown.rsplit("»", 1)[-1]) <= 4, "at most a few characters of the encoding are left"
    urlsafe = base64.urlsafe_b64encode(("\xff" + KEY).encode()).decode()
    assert "«secret:API_KEY»" in redactor.text(urlsafe)


def test_overlapping_values_the_longest_wins():
    redactor = Redactor({"SHORT": "abcd1234", "LONG": "abcd1234xyz", "INSIDE": "1234xyz-tail"})
    assert redactor.text("abcd1234xyz") == "«secret:LONG»"
    assert redactor.text("abcd1234 and abcd1234x") == "«secret:SHORT» and «secret:SHORT»x"
    assert redactor.text("1234xyz-tail") == "«secret:INSIDE»"


def test_one_value_under_two_names_shows_one_name():
    assert Redactor({"B_KEY": "same-value", "A_KEY": "same-value"}).text("same-value") == "«secret:A_KEY»"


def test_values_shorter_than_four_characters_are_left():
    redactor = Redactor({"PIN": "123", "EMPTY": ""})
    assert not redactor
    assert redactor.text("pin 123, total 1234") == "pin 123, total 1234"
    assert Redactor({"PIN4": "1234"}).text("pin 1234") == "pin «secret:PIN4»"


def test_redacting_twice_changes_nothing():
    redactor = Redactor({"API": "secret"})  # a value the placeholder itself holds
    once = redactor.text("the secret")
    assert once == "the «secret:API»"
    assert redactor.text(once) == once


def test_bytes_are_redacted_as_utf8():
    redactor = Redactor({"U": "pässwörd-ünï"})
    data = "x pässwörd-ünï y".encode()
    assert redactor.data(data) == "x «secret:U» y".encode()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 16])
def test_a_secret_split_across_stream_pieces_is_still_found(redactor, size):
    text = f"start {KEY} middle {quote(PASSWORD, safe='')} {KEY}{KEY} end\n" * 3
    for stream, whole in ((redactor.stream(), text), (redactor.byte_stream(), text.encode())):
        pieces = [stream.feed(whole[i : i + size]) for i in range(0, len(whole), size)]
        joined = whole[:0].join(pieces) + (stream.end() or whole[:0])
        expected = redactor.text(text)
        assert (joined if isinstance(joined, str) else joined.decode()) == expected
        assert KEY not in expected and "«secret:API_KEY»«secret:API_KEY»" in expected


def test_a_stream_holds_back_only_what_could_start_a_secret(redactor):
    stream = redactor.stream()
    assert stream.feed("progress 10%\n") == "progress 10%\n", "no secret's start: passed on at once"
    assert stream.feed(f"key {KEY[:5]}") == "key "
    assert stream.feed(KEY[5:] + " done") == "«secret:API_KEY» done"
    assert stream.feed(f"partial {KEY[:4]}") == "partial "
    assert stream.end() == KEY[:4], "the end gives what was held, never losing output"


def test_nested_values_an_execution_and_its_images():
    redactor = Redactor({"API_KEY": KEY})
    png = base64.b64encode(KEY.encode() * 3).decode()  # an "image" whose bytes happen to hold it
    execution = Execution(
        results=[Result.from_bundle({"text/plain": f"'{KEY}'", "image/png": png}, is_main_result=True)],
        stdout_parts=[f"{KEY}\n"],
        error=ExecutionError("ValueError", f"bad {KEY}", f"Traceback\nValueError: bad {KEY}"),
    )
    shown = redactor.value(execution)
    assert shown.stdout == "«secret:API_KEY»\n" and shown.text == "'«secret:API_KEY»'"
    assert shown.results[0].bundle["text/plain"] == "'«secret:API_KEY»'"
    assert shown.results[0].png == png and shown.results[0].bundle["image/png"] == png, "images are left"
    assert shown.error.value == "bad «secret:API_KEY»" and KEY not in shown.error.traceback
    assert execution.stdout == f"{KEY}\n", "the original is not changed"
    payload = {"text": KEY, "rows": [[1, KEY]], "nested": {KEY: (KEY,)}}
    assert KEY not in json.dumps(redactor.value(payload))


def test_a_download_is_redacted_across_its_chunks(redactor):
    data = f"id,key\n1,{KEY}\n2,{KEY}\n".encode()

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(data), 5):
            yield data[i : i + 5]

    async def read(stream: AsyncIterator[bytes]) -> bytes:
        return b"".join([chunk async for chunk in stream])

    expected = "id,key\n1,«secret:API_KEY»\n2,«secret:API_KEY»\n".encode()
    assert asyncio.run(read(redacted_chunks(chunks(), redactor))) == expected
    untouched = chunks()
    assert redacted_chunks(untouched, Redactor({})) is untouched, "no secret: the stream as it is"
