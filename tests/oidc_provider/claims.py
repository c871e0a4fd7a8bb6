"""The claims the test provider tells about a user: their name, e-mail and groups (Django groups)."""

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


class ClaimsValidator(OAuth2Validator):
    oidc_claim_scope = {**OAuth2Validator.oidc_claim_scope, "groups": "profile"}

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        return {
            "preferred_username": user.username,
            "email": user.email,
            "email_verified": True,
            "groups": sorted(group.name for group in user.groups.all()),
        }
