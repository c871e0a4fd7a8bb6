"""Accounts of single sign-on: the username a new one gets, and the workspace roles its provider's
groups give it (ANALYST_OIDC_GROUP_ROLES), set again at every sign-in."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import transaction

from analyst.models.workspaces import Membership, Role, Workspace

NOT_A_USERNAME_CHARACTER = re.compile(r"[^\w.@+-]")
# The stronger of two roles a user's groups give in one workspace wins.
RANK = {Role.VIEWER: 0, Role.EDITOR: 1, Role.ADMIN: 2, Role.OWNER: 3}


def free_username(claims: Mapping[str, Any]) -> str:
    """``preferred_username``, else the e-mail's local part, in Django's username characters and
    made unique with a number ("ada", "ada-2", ...)."""
    wanted = str(claims.get("preferred_username") or str(claims.get("email") or "").partition("@")[0])
    base = NOT_A_USERNAME_CHARACTER.sub("-", wanted).strip("-")[:140] or "user"
    taken = get_user_model().objects.filter(username__iexact=base).exists
    name, number = base, 1
    while taken():
        number += 1
        name = f"{base}-{number}"
        taken = get_user_model().objects.filter(username__iexact=name).exists
    return name


def groups_of(claims: Mapping[str, Any]) -> set[str]:
    """The groups the claim ANALYST_OIDC_GROUPS_CLAIM names: a list, or one string."""
    value = claims.get(settings.ANALYST_OIDC_GROUPS_CLAIM) or []
    return {value} if isinstance(value, str) else {str(group) for group in value}


def roles_for(groups: Iterable[str]) -> dict[str, str]:
    """Workspace name -> the role ANALYST_OIDC_GROUP_ROLES gives someone in ``groups``."""
    groups = set(groups)
    roles: dict[str, str] = {}
    for group, workspace, role in settings.ANALYST_OIDC_GROUP_ROLES:
        if group in groups and RANK[Role(role)] >= RANK[Role(roles.get(workspace, Role.VIEWER))]:
            roles[workspace] = role
    return roles


def team_workspace(name: str) -> Workspace:
    """The team workspace called ``name`` (the oldest, should there be two), made when missing."""
    workspace = Workspace.objects.filter(name=name, personal_of=None).order_by("id").first()
    return workspace or Workspace.objects.create(name=name)


@transaction.atomic
def apply_group_roles(*, user: AbstractUser, groups: Iterable[str]) -> None:
    """Give ``user`` the role their groups give in each workspace ANALYST_OIDC_GROUP_ROLES names,
    and none in such a workspace their groups no longer give one in."""
    wanted = roles_for(groups)
    for name in {workspace for _, workspace, _ in settings.ANALYST_OIDC_GROUP_ROLES}:
        if name in wanted:
            Membership.objects.update_or_create(
                workspace=team_workspace(name), user=user, defaults={"role": wanted[name]}
            )
        else:
            Membership.objects.filter(workspace__name=name, workspace__personal_of=None, user=user).delete()
