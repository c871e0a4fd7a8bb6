"""The instructions page: what the user tells the model in every session of theirs, edited."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from analyst.trust import instructions as saved_instructions


@login_required
@require_http_methods(["GET", "POST"])
def instructions_page(request: HttpRequest) -> HttpResponse:
    saved = saved_instructions.saved(request.user)
    context: dict[str, object] = {
        "text": saved.text,
        "saved": saved,
        "max_length": saved_instructions.MAX_LENGTH,
    }
    if request.method == "POST":
        text = request.POST.get("text", "")
        try:
            saved_instructions.do_save(user=request.user, text=text)
        except saved_instructions.BadInstructions as exc:
            context.update(error=str(exc).capitalize() + ".", text=text)
            return render(request, "analyst/instructions.html", context, status=400)
        messages.info(
            request, "Saved: your sessions give the model these instructions from their next question."
        )
        return redirect("instructions")
    return render(request, "analyst/instructions.html", context)
