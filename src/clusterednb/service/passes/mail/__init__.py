"""Invitations where they arrive: iMIP (RFC 6047) messages read from a mailbox over IMAP,
decided as the calendar pass decides them, answered by mail."""
