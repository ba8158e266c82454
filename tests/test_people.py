"""People and team projects, on SQLite and PostgreSQL: accounts with argon2id passwords,
sign-in that slows down after wrong passwords, owners' projects, members and invitations that
expire, the identity tools' services, and what a person writes authored by their name."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from tests.conftest import Keys, make_build, shot
from viewfinder.errors import Conflict, Forbidden, InvalidInput, NotFound, SlowDown, Unauthenticated
from viewfinder.services import builds, identity, people, teams, threads
from viewfinder.services.env import Env
from viewfinder.store.models import Invitation, Person, utcnow

PASSWORD = "correct horse battery"


def owner_of(env: Env) -> people.PersonRecord:
    return people.create_person(env, "Ada@Example.com", "Ada", PASSWORD, owner=True)


def test_a_password_is_stored_as_argon2id_and_signs_its_person_in(env: Env, keys: Keys) -> None:
    made = owner_of(env)
    assert made.email == "ada@example.com" and made.is_owner
    with env.db.read() as s:
        stored = s.scalar(select(Person.password_hash).where(Person.id == made.id))
    assert stored is not None and stored.startswith("$argon2id$") and PASSWORD not in stored
    assert people.sign_in(env, "ADA@example.com ", PASSWORD).id == made.id
    # The first owner of a server with a project already is that project's admin.
    actor = people.person_actor(env, made.id, keys.admin.project_id)
    assert actor.roles == {"admin"} and actor.name == "Ada" and not actor.is_agent


def test_accounts_refuse_taken_emails_malformed_ones_and_short_passwords(env: Env) -> None:
    owner_of(env)
    with pytest.raises(Conflict, match="has an account already"):
        people.create_person(env, "ada@example.com", "Ada 2", PASSWORD)
    with pytest.raises(InvalidInput, match="is not an email address"):
        people.create_person(env, "ada", "Ada", PASSWORD)
    with pytest.raises(InvalidInput, match="at least 10 characters"):
        people.create_person(env, "bo@example.com", "Bo", "short")


def test_wrong_passwords_are_refused_alike_and_slow_the_next_tries_down(env: Env) -> None:
    owner_of(env)
    for email in ("ada@example.com", "nobody@example.com"):
        with pytest.raises(Unauthenticated, match="wrong email or password"):
            people.sign_in(env, email, "not the password")
    for _ in range(people.FREE_TRIES - 1):
        with pytest.raises(Unauthenticated):
            people.sign_in(env, "ada@example.com", "still not it")
    # Three wrong in a row: even the right password waits now, and is told how long.
    with pytest.raises(SlowDown, match=r"too many wrong passwords .* try again in \d+ s") as slow:
        people.sign_in(env, "ada@example.com", PASSWORD)
    assert slow.value.status == 429 and slow.value.details["retry_after"] >= 1
    assert [people.wait_after(n) for n in (0, 2, 3, 4, 5, 50)] == [0, 0, 2, 4, 8, people.MAX_WAIT]
    # Once the wait is over, the right password signs in and the count starts again.
    with env.db.write() as s:
        s.execute(update(Person).values(last_failed_at=utcnow() - timedelta(minutes=20)))
    assert people.sign_in(env, "ada@example.com", PASSWORD).email == "ada@example.com"
    with env.db.read() as s:
        assert s.scalar(select(Person.failed_logins)) == 0


def test_an_owner_resets_a_password_and_the_old_one_stops_working(env: Env) -> None:
    owner_of(env)
    people.reset_password(env, "ada@example.com", "a brand new password")
    with pytest.raises(Unauthenticated):
        people.sign_in(env, "ada@example.com", PASSWORD)
    assert people.sign_in(env, "ada@example.com", "a brand new password").name == "Ada"
    with pytest.raises(NotFound, match="nobody has the email"):
        people.reset_password(env, "zed@example.com", "a brand new password")


def test_owners_create_rename_and_archive_projects_and_nobody_else_can(
    env: Env, keys: Keys
) -> None:
    ada = owner_of(env)
    bo = people.create_person(env, "bo@example.com", "Bo", PASSWORD)
    ada_actor = people.person_actor(env, ada.id, keys.admin.project_id)
    shop = teams.create_project(env, ada_actor, "shop")
    assert people.person_actor(env, ada.id, shop.id).roles == {"admin"}
    with pytest.raises(Forbidden, match="a project key cannot create projects"):
        teams.create_project(env, keys.admin, "keyed")
    teams.add_member_locally(env, "shop", "bo@example.com", ["admin"])
    bo_actor = people.person_actor(env, bo.id, shop.id)
    with pytest.raises(Forbidden, match="only the server's owners can create projects"):
        teams.create_project(env, bo_actor, "mine")
    with pytest.raises(Conflict, match="exists already"):
        teams.create_project(env, ada_actor, "shop")

    renamed = teams.update_project(env, ada_actor, "shop", name="storefront")
    assert renamed.name == "storefront"
    teams.update_project(env, ada_actor, shop.id, archived=True)
    with pytest.raises(Forbidden, match="no longer a member of this project"):
        people.person_actor(env, bo.id, shop.id)
    assert [p.name for p in identity.list_projects(env, ada_actor).projects] == ["default"]
    teams.update_project(env, None, shop.id, archived=False)
    assert people.person_actor(env, bo.id, shop.id).roles == {"admin"}


def test_an_invitation_link_makes_a_member_once_and_not_after_it_expires(
    env: Env, keys: Keys
) -> None:
    owner_of(env)
    invited = teams.invite(env, keys.admin, ["review"], email="cy@example.com")
    assert invited.url.startswith(env.settings.public_url) and "/invitations/vf_inv_" in invited.url
    token = invited.url.rsplit("/", 1)[1]
    assert teams.read_invitation(env, token).state == "open"
    cy = people.create_person(env, "cy@example.com", "Cy", PASSWORD)
    dee = people.create_person(env, "dee@example.com", "Dee", PASSWORD)
    with pytest.raises(Conflict, match="this invitation is for cy@example.com"):
        teams.accept_invitation(env, token, dee.id)
    teams.accept_invitation(env, token, cy.id)
    assert people.person_actor(env, cy.id, keys.admin.project_id).roles == {"review"}
    with pytest.raises(Conflict, match="was used already"):
        teams.accept_invitation(env, token, cy.id)

    late = teams.invite(env, keys.admin, ["upload"]).url.rsplit("/", 1)[1]
    with env.db.write() as s:
        s.execute(
            update(Invitation)
            .where(Invitation.accepted_at.is_(None))
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    assert teams.read_invitation(env, late).state == "expired"
    with pytest.raises(Conflict, match="this invitation expired on .* ask the project's admins"):
        teams.accept_invitation(env, late, dee.id)
    with pytest.raises(NotFound, match="not one of this server's"):
        teams.read_invitation(env, "vf_inv_forged")
    with pytest.raises(Forbidden, match="'admin' role"):
        teams.invite(env, keys.agent, ["review"])


def test_members_are_managed_by_admins_and_the_last_admin_stays(env: Env, keys: Keys) -> None:
    ada = owner_of(env)
    people.create_person(env, "bo@example.com", "Bo", PASSWORD)
    added = teams.set_member(env, keys.admin, "bo@example.com", ["review", "upload"])
    assert added.roles == ["upload", "review"]
    listed = {m.email: m.roles for m in teams.list_members(env, keys.admin)}
    assert listed == {"ada@example.com": ["admin"], "bo@example.com": ["upload", "review"]}
    with pytest.raises(Conflict, match="last admin"):
        teams.set_member(env, keys.admin, "ada@example.com", ["review"])
    with pytest.raises(Conflict, match="last admin"):
        teams.remove_member(env, keys.admin, ada.id)
    with pytest.raises(NotFound, match="send them an invitation link"):
        teams.set_member(env, keys.admin, "zed@example.com", ["review"])
    with pytest.raises(Forbidden, match="'admin' role"):
        teams.set_member(env, keys.agent, "bo@example.com", ["admin"])


def test_a_person_sees_only_the_projects_they_belong_to(env: Env, keys: Keys, other: Keys) -> None:
    ada = owner_of(env)  # admin of both projects (they existed when she was made)
    bo = people.create_person(env, "bo@example.com", "Bo", PASSWORD)
    teams.add_member_locally(env, "other", "bo@example.com", ["review"])
    make_build(env, keys.ci, "aaaa", {"home": shot()})
    other_build = make_build(env, other.ci, "bbbb", {"home": shot()})
    with pytest.raises(Forbidden, match="no longer a member"):
        people.person_actor(env, bo.id, keys.admin.project_id)
    bo_actor = people.person_actor(env, bo.id, other.admin.project_id)
    assert [b.id for b in builds.list_builds(env, bo_actor).items] == [other_build]
    listed = identity.list_projects(env, bo_actor).projects
    assert [(p.name, p.roles, p.is_default) for p in listed] == [("other", ["review"], True)]
    ada_projects = identity.list_projects(
        env, people.person_actor(env, ada.id, keys.admin.project_id)
    )
    assert [p.name for p in ada_projects.projects] == ["default", "other"]


def test_identity_services_describe_a_person_an_agent_for_them_and_a_key(
    env: Env, keys: Keys, other: Keys
) -> None:
    ada = owner_of(env)
    agent = people.person_actor(env, ada.id, keys.admin.project_id, as_agent=True)
    me = identity.whoami(env, agent)
    assert (me.kind, me.name, me.acting_for, me.email) == (
        "agent",
        "agent for Ada",
        "Ada",
        "ada@example.com",
    )
    chosen = identity.set_project(env, agent, "other")
    assert chosen.project.name == "other" and chosen.default_project == chosen.project
    with env.db.read() as s:
        person = s.get(Person, ada.id)
        assert person is not None and person.default_project_id == other.admin.project_id
    with pytest.raises(NotFound, match="you are not a member of a project 'nope'"):
        identity.set_project(env, agent, "nope")

    key_me = identity.whoami(env, keys.agent)
    assert key_me.kind == "key" and key_me.project.name == "default" and key_me.email is None
    assert [p.name for p in identity.list_projects(env, keys.agent).projects] == ["default"]
    assert identity.get_project(env, keys.agent).source == "key"
    with pytest.raises(Forbidden, match="a project key works in its own project only"):
        identity.set_project(env, keys.agent, "other")


def test_what_a_person_writes_is_authored_by_them_and_an_agent_is_marked_for_them(
    env: Env, keys: Keys
) -> None:
    ada = owner_of(env)
    make_build(env, keys.ci, "aaaa", {"home": shot()})
    build = make_build(env, keys.ci, "bbbb", {"home": shot(box=(2, 2, 20, 20))})
    story = builds.get_build(env, keys.ci, build_id=build).changed.items[0]
    assert story.diff_id is not None
    person = people.person_actor(env, ada.id, keys.admin.project_id)
    agent = people.person_actor(env, ada.id, keys.admin.project_id, as_agent=True)
    said = threads.create_comment(env, person, story.diff_id, "why is this bigger?")
    answered = threads.reply(env, agent, said.id, "the box grew by design")
    assert (said.author.name, said.author.is_agent, said.author.key_id) == ("Ada", False, ada.id)
    assert (answered.author.name, answered.author.is_agent) == ("agent for Ada", True)
