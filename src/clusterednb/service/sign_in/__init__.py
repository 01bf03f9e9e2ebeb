"""Sign-in with the organisation's OpenID Connect provider: its settings and its routes."""
