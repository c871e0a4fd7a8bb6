"""A session's comments: listed by any member, added by any member (a viewer too), deleted by
their author or an admin."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_http_methods

from analyst.api.access import session_for
from analyst.api.auth import ApiError, api_view, json_body
from analyst.collab import comments
from analyst.workspaces.roles import Action


@api_view
@require_http_methods(["GET", "POST"])
def comments_collection(request: HttpRequest, session_id: str) -> JsonResponse:
    session = session_for(request, session_id, Action.COMMENT)
    if request.method == "GET":
        return JsonResponse({"comments": [comments.as_dict(c) for c in comments.listed(session)]})
    body = json_body(request)
    try:
        seq = comments.check_seq(session, body.get("seq"))
        text = comments.check_text(body.get("text"))
    except comments.InvalidComment as exc:
        raise ApiError(400, "invalid_comment", str(exc)) from None
    made = comments.do_add(session=session, author=request.user, seq=seq, text=text)
    return JsonResponse(comments.as_dict(made), status=201)


@api_view
@require_http_methods(["DELETE"])
def comment_detail(request: HttpRequest, session_id: str, comment_id: int) -> HttpResponse:
    session = session_for(request, session_id, Action.COMMENT)
    comment = comments.get(session, comment_id)
    comments.check_may_delete(comment, request.user)
    comments.do_delete(comment=comment, by=request.user)
    return HttpResponse(status=204)
