"""Personas of a team workspace (olga owns it, adam is an admin, eve edits, vic views) and a
stranger (mallory), each with an API client."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import ApiToken, Membership, Workspace
from analyst.models.workspaces import Role


def bearer_client(user: Any) -> Client:
    _, secret = ApiToken.issue(user)
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def make_user(name: str) -> Any:
    return get_user_model().objects.create_user(name, email=f"{name}@example.test")


@pytest.fixture
def team(db: None) -> Workspace:
    """The workspace "Team" with one member of each role."""
    workspace = Workspace.objects.create(name="Team")
    roles = [("olga", Role.OWNER), ("adam", Role.ADMIN), ("eve", Role.EDITOR), ("vic", Role.VIEWER)]
    for name, role in roles:
        Membership.objects.create(workspace=workspace, user=make_user(name), role=role)
    return workspace


@pytest.fixture
def mallory(db: None) -> Any:
    return make_user("mallory")


def user(name: str) -> Any:
    return get_user_model().objects.get(username=name)


def client_of(name: str) -> Client:
    return bearer_client(user(name))


def membership(workspace: Workspace, name: str) -> Membership:
    return Membership.objects.get(workspace=workspace, user__username=name)
