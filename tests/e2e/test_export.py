"""The session page's Export links download the session as a notebook, a script and a report, and
the notebook and the script again in a .zip with a requirements.txt."""

from __future__ import annotations

import json
import re
import zipfile

from tests.fakes.model_server import anthropic_text, anthropic_tool_call

CODE = "print('rows:', 3)\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"


def test_the_export_links_download_the_session(stack, web, alice_login, shoot, tmp_path):
    from playwright.sync_api import expect

    stack.script(
        anthropic_tool_call("run_python", {"code": CODE}, text_before="Let me plot it."),
        anthropic_text("It rises, then falls."),
    )
    page = alice_login()
    page.get_by_test_id("new-session-title").fill("Rise and fall")
    page.get_by_test_id("new-session").click()
    page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
    page.get_by_test_id("composer-input").fill("Plot it")
    page.get_by_test_id("composer-input").press("Enter")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("rises, then falls", timeout=90_000)
    expect(page.get_by_test_id("export-panel")).to_be_visible()
    shoot(page, "answered")

    downloaded = {}
    for kind in ("ipynb", "py", "html"):
        with page.expect_download() as info:
            page.get_by_test_id(f"export-{kind}").click()
        download = info.value
        assert download.suggested_filename == f"rise-and-fall.{kind}"
        target = tmp_path / download.suggested_filename
        download.save_as(target)
        downloaded[kind] = target.read_text()

    book = json.loads(downloaded["ipynb"])
    code = [cell for cell in book["cells"] if cell["cell_type"] == "code"]
    assert code[0]["metadata"]["analyst"]["by"] == "sandbox"  # the imports the sandbox made
    assert "".join(code[1]["source"]) == CODE
    assert [output["output_type"] for output in code[1]["outputs"]] == ["stream", "display_data"]
    assert "plt.plot([1, 3, 2])" in downloaded["py"]
    assert "data:image/png;base64," in downloaded["html"] and "It rises, then falls." in downloaded["html"]

    for kind in ("ipynb", "py"):
        with page.expect_download() as info:
            page.get_by_test_id(f"export-{kind}-zip").click()
        assert info.value.suggested_filename == f"rise-and-fall-{kind}.zip"
        with zipfile.ZipFile(info.value.path()) as made:
            names = sorted(made.namelist())
        assert names == ["rise-and-fall/requirements.txt", f"rise-and-fall/rise-and-fall.{kind}"]
