"""The person's rules and the past in a calendar pass, against a real CalDAV server
(Radicale started by the test)."""

from __future__ import annotations

from caldav_helpers import INVITATIONS, USER, run_sync, server_copy, upload
from clusterednb.meeting.invitation import find_attendee
from clusterednb.meeting.rules import PersonRules


def partstat(calendar, uid: str) -> str:
    event = next(iter(server_copy(calendar, uid).walk("VEVENT")))
    return str(find_attendee(event, USER).params["PARTSTAT"])


def test_the_persons_rules_in_the_state_store_decide_before_the_model(
    radicale,
    setting,
    tmp_path,
    capsys,
):
    from clusterednb.service.store import ServiceStore

    _, calendar = upload(radicale, {"ny": INVITATIONS["ny"], "berlin": INVITATIONS["berlin"]})
    with ServiceStore(tmp_path / "state.db") as store:
        store.add_user("ann", USER)
        rules = PersonRules(
            time_zone="America/New_York", working_hours=("09:00", "10:00"), outside_hours="decline"
        )
        store.set_rules("ann", rules)
    status, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "0")
    assert status == 0
    by_uid = {o["uid"]: o for o in outcomes}
    assert by_uid["ny"]["decision"] == "decline"  # 10:00-10:30 New York: after the hours
    assert "outside your working hours" in by_uid["ny"]["reasons"][0]["words"]
    assert partstat(calendar, "ny") == "DECLINED"
    assert partstat(calendar, "berlin") == "DECLINED"  # 16:00 Berlin is 10:00 New York


def test_a_meeting_that_has_ended_is_never_answered(
    radicale,
    setting,
    tmp_path,
    capsys,
    monkeypatch,
):
    from clusterednb.service.store import ServiceStore

    monkeypatch.setenv("CNB_NOW", "2026-11-04T10:30:00+00:00")  # New York's 10:00 is 15:00 UTC
    _, calendar = upload(radicale, {"ny": INVITATIONS["ny"], "berlin": INVITATIONS["berlin"]})
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "0")
    by_uid = {o["uid"]: o for o in outcomes}
    assert by_uid["ny"]["action"] != "expired: never answered"  # 15:00-15:30 UTC: ahead
    monkeypatch.setenv("CNB_NOW", "2026-11-05T17:00:00+00:00")
    _, calendar = upload(
        radicale, {"late": INVITATIONS["berlin"].replace("UID:berlin", "UID:late")}
    )
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "0")
    late = next(o for o in outcomes if o["uid"] == "late")
    assert late["decision"] == "expired" and late["action"] == "expired: never answered"
    assert partstat(calendar, "late") == "NEEDS-ACTION"
    with ServiceStore(tmp_path / "state.db") as store:
        (record,) = [r for r in store.requests("ann") if r["uid"] == "late"]
        assert record["decision"] == "expired"
    _, again, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "0")
    assert next(o for o in again if o["uid"] == "late")["action"] == "expired: never answered"
