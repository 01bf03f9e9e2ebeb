"""The simulated organisation: answered requests, and its iCalendar side."""
