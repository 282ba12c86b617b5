"""What both Authlib test servers keep alike: the one user who signs in, and the
tokens they issue (Authlib asks for these as TokenMixin objects)."""
import time

from authlib.oauth2.rfc6749.models import TokenMixin


class User:
    def __init__(self, uid, name):
        self.id = uid
        self.name = name

    def get_user_id(self):
        return self.id


ALICE = User(1, "alice")


class Token(TokenMixin):
    """An issued token; `revoked` is set by the revocation endpoint."""

    def __init__(self, client, user, data):
        self.client = client
        self.client_id = client.get_client_id()
        self.user = user
        self.access_token = data["access_token"]
        self.refresh_token = data.get("refresh_token")
        self.scope = data.get("scope", "")
        self.expires_in = int(data.get("expires_in", 0))
        self.issued_at = time.time()
        self.revoked = False

    def check_client(self, client):
        return client.get_client_id() == self.client_id

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return self.expires_in

    def is_expired(self):
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self):
        return self.revoked

    def get_user(self):
        return self.user

    def get_client(self):
        return self.client
