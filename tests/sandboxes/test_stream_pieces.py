"""A cell's stdout arrives in the pieces the kernel flushed: ipykernel's 0.2 s gathering, and
sandboxd's own bound of about a MiB of text a message, counted since the last message sent (not
over the kernel's whole life, which cut a later cell's short line in two)."""

MIB = 1 << 20


def pieces_of(sandbox, code: str) -> list[str]:
    pieces: list[str] = []
    sandbox.run_code(code, on_stdout=pieces.append)
    return pieces


def test_a_short_line_after_a_mib_of_output_arrives_whole(sandbox):
    # Nearly a MiB, sent at the cell's end (the cap keeps 64 KiB of it, the kernel wrote it all).
    sandbox.run_code(f"import sys; sys.stdout.write('x' * {MIB - 1})")
    assert pieces_of(sandbox, "print(42)") == ["42\n"]


def test_a_big_write_goes_out_in_pieces_of_a_mib_at_most(sandbox):
    pieces = pieces_of(sandbox, f"import sys; sys.stdout.write('y' * {3 * MIB}); print('end')")
    assert pieces, "nothing arrived"
    assert all(len(piece) <= MIB + len("end\n") for piece in pieces)
