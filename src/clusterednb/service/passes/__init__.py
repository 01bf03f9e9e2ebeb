"""The assistant's passes over people's calendars and mailboxes: what one pass does with each
invitation, the order that makes it safe to interrupt, the outbox of replies, the person's
lock, and ``cnb serve``'s schedule of every registered person's passes."""
