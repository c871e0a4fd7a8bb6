"""The provider's groups give workspace roles (ANALYST_OIDC_GROUP_ROLES), set again at every
sign-in: a group gained raises the role, a group lost takes away what it gave."""

from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models.workspaces import Membership, Workspace


def roles_of(username: str) -> dict[str, str]:
    memberships = Membership.objects.filter(user__username=username, workspace__personal_of=None)
    return dict(memberships.values_list("workspace__name", "role"))


def test_a_group_gives_its_role_in_a_workspace_made_for_it(provider, sign_in):
    provider.set_user("ada", email="ada@example.com", groups=["analysts", "unmapped"])
    sign_in(Client(), "ada")
    assert roles_of("ada") == {"Data team": "editor"}
    assert Workspace.objects.filter(name="Data team", personal_of=None).count() == 1


def test_the_role_follows_the_groups_at_every_sign_in(provider, sign_in):
    team = Workspace.objects.create(name="Data team")
    elsewhere = Workspace.objects.create(name="Finance")
    provider.set_user("ada", email="ada@example.com", groups=["analysts"])
    sign_in(Client(), "ada")
    ada = get_user_model().objects.get(username="ada")
    Membership.objects.create(workspace=elsewhere, user=ada, role="viewer")

    provider.set_user("ada", email="ada@example.com", groups=["analysts", "leads"])
    sign_in(Client(), "ada")
    assert roles_of("ada") == {"Data team": "admin", "Finance": "viewer"}

    provider.set_user("ada", email="ada@example.com", groups=[])
    sign_in(Client(), "ada")
    assert roles_of("ada") == {"Finance": "viewer"}  # what no mapping gave stays
    assert Workspace.objects.filter(name="Data team").get() == team
