"""Every method of the client against a real `engram serve`."""

from __future__ import annotations

import base64
import datetime as dt
import struct
import unittest
from typing import Dict, List, Optional

import engram_client as ec
from engram_client import Client, EpisodeInput, MemoryFilter, MemoryInput, MemoryPatch, Namespace, Scope

from engram_server import Server

server: Optional[Server] = None


def setUpModule() -> None:
    global server
    server = Server(["--rate-limit", "0"])


def tearDownModule() -> None:
    if server is not None:
        server.stop()


def client(**kw: object) -> Client:
    assert server is not None
    return Client(server.url, server.key, **kw)  # type: ignore[arg-type]


def fake_id(i: int) -> str:
    """A well-formed id that names no record."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    s = ""
    for _ in range(8):
        s = alphabet[i % 32] + s
        i //= 32
    return "01HZY3V7Q8X2M4N6P8" + s


class HealthTest(unittest.TestCase):
    def test_health_ready_openapi(self) -> None:
        c = client()
        self.assertEqual(c.health(), "ok")
        self.assertEqual(c.ready(), "ready")
        doc = c.openapi()
        self.assertIn("/v1/memories", doc["paths"])


class EpisodeTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.scope = Scope("acme", "app", user="episodes-" + self.id().rsplit(".", 1)[-1])

    def test_add_get_list_delete(self) -> None:
        res = self.c.add_episodes(
            self.scope,
            [
                EpisodeInput(content="Ich wohne in München und fahre gern Fahrrad.", role="user", metadata={"lang": "de", "n": 1}),
                {"role": "user", "content": "我住在上海，喜欢喝绿茶。", "metadata": {"lang": "zh"}},
                {"role": "assistant", "content": "Vale, lo recordaré: te gusta el té verde."},
            ],
        )
        self.assertEqual(len(res.episodes), 3)
        self.assertIsInstance(res.episodes[0], ec.Episode)
        self.assertEqual(res.episodes[0].content, "Ich wohne in München und fahre gern Fahrrad.")
        self.assertEqual(res.episodes[0].namespace.user, self.scope.user)
        self.assertTrue(res.memories, "rule-based formation formed no memory")
        self.assertTrue(all(isinstance(m, ec.Memory) for m in res.memories))

        got = self.c.get_episode(self.scope, res.episodes[1].id)
        self.assertEqual(got.content, "我住在上海，喜欢喝绿茶。")
        self.assertEqual(got.metadata, {"lang": "zh"})

        page = self.c.list_episodes(self.scope, roles=["user"])
        self.assertEqual({e.id for e in page.items}, {res.episodes[0].id, res.episodes[1].id})
        self.assertIsNone(page.next)
        page = self.c.list_episodes(self.scope, metadata={"lang": "de", "n": 1})
        self.assertEqual([e.id for e in page.items], [res.episodes[0].id])
        page = self.c.list_episodes(self.scope, contains="绿茶", roles=["user"])
        self.assertEqual([e.id for e in page.items], [res.episodes[1].id])

        self.c.delete_episode(self.scope, res.episodes[2].id)
        with self.assertRaises(ec.NotFoundError) as cm:
            self.c.get_episode(self.scope, res.episodes[2].id)
        self.assertEqual(cm.exception.status, 404)
        self.assertEqual(cm.exception.code, ec.NOT_FOUND)

    def test_form_false_and_times(self) -> None:
        at = dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.timezone.utc)
        res = self.c.add_episodes(self.scope, [EpisodeInput(content="stored only", occurred_at=at)], form=False)
        self.assertEqual(res.memories, [])
        self.assertTrue(res.episodes[0].occurred_at.startswith("2024-05-01T12:30:00"))
        page = self.c.list_episodes(self.scope, occurred_after=at - dt.timedelta(minutes=1), occurred_before="2024-05-02T00:00:00Z")
        self.assertEqual([e.id for e in page.items], [res.episodes[0].id])
        self.assertEqual(self.c.list_episodes(self.scope, occurred_after=at + dt.timedelta(days=1)).items, [])

    def test_paging(self) -> None:
        texts = [f"Eintrag {i}: Grüße aus Köln" for i in range(7)]
        res = self.c.add_episodes(self.scope, [EpisodeInput(content=t) for t in texts], form=False)
        want = [e.id for e in res.episodes]
        first = self.c.list_episodes(self.scope, limit=3)
        self.assertEqual(len(first.items), 3)
        self.assertIsNotNone(first.next)
        second = self.c.list_episodes(self.scope, limit=3, cursor=first.next)
        self.assertEqual(len(second.items), 3)
        self.assertFalse({e.id for e in first.items} & {e.id for e in second.items})
        got = [e.id for e in self.c.iter_episodes(self.scope, limit=2)]
        self.assertEqual(sorted(got), sorted(want))
        self.assertEqual(len(got), 7)

    def test_async_and_jobs(self) -> None:
        res = self.c.add_episodes(self.scope, [EpisodeInput(content="Mi hermana vive en Madrid.", role="user")], async_=True)
        self.assertIsNotNone(res.job)
        assert res.job is not None
        self.assertEqual(res.memories, [])
        self.assertEqual(res.job.episodes, [res.episodes[0].id])
        job = self.c.wait_job(self.scope, res.job.id, timeout=30)
        self.assertEqual(job.state, "done", job.last_error)
        self.assertEqual(job.attempts, 1)
        page = self.c.list_jobs(self.scope)
        self.assertIn(job.id, [j.id for j in page.items])
        self.assertIn(job.id, [j.id for j in self.c.list_jobs(self.scope, states=["done"]).items])
        self.assertNotIn(job.id, [j.id for j in self.c.list_jobs(self.scope, states=["queued"]).items])
        self.assertIn(job.id, [j.id for j in self.c.iter_jobs(self.scope, limit=1)])
        mems = self.c.list_memories(self.scope, MemoryFilter(sources=[res.episodes[0].id])).items
        self.assertTrue(mems, "the job formed no memory")
        with self.assertRaises(ec.NotFoundError):
            self.c.get_job(self.scope, fake_id(1))


class ResourceTest(unittest.TestCase):
    def test_upload_search_download_delete(self) -> None:
        c = client()
        scope = Scope("acme", "app", user="resources-py")
        doc = "# Rezepte\n\nDer Teig ruht über Nacht im Kühlschrank.\n\n## 面条\n\n面条要煮八分钟。\n".encode("utf-8")
        r = c.add_resource(scope, doc, name="rezepte.md", mime_type="text/markdown", source="kochbuch")
        self.assertEqual(r.size, len(doc))
        self.assertEqual(r.memories, 2)
        self.assertEqual(r.source, "kochbuch")
        self.assertEqual(c.get_resource(scope, r.id).sha256, r.sha256)
        self.assertIn(r.id, [x.id for x in c.list_resources(scope).items])
        self.assertEqual(c.download_resource(scope, r.id), doc)
        hits = c.search(scope, "Teig Kühlschrank").hits
        self.assertTrue(hits)
        meta = hits[0].memory.metadata or {}
        self.assertEqual(meta.get("resource_id"), r.id)
        span = meta["resource"]
        self.assertEqual(doc[span["start"]:span["end"]].decode("utf-8"), hits[0].memory.value)
        with self.assertRaises(ec.NotFoundError):
            c.get_resource(Scope("acme", "app", user="someone-else"), r.id)
        c.delete_resource(scope, r.id)
        with self.assertRaises(ec.NotFoundError):
            c.download_resource(scope, r.id)
        self.assertEqual(c.search(scope, "Teig Kühlschrank").hits, [])


    def test_episode_media(self) -> None:
        c = client()
        scope = Scope("acme", "app", user="media-py")
        audio = c.add_resource(scope, b"OggS fake audio", name="anruf.ogg", mime_type="audio/ogg")
        image = c.add_resource(scope, b"\xff\xd8 fake jpeg", name="hafen.jpg", mime_type="image/jpeg")
        res = c.add_episodes(scope, [EpisodeInput(content="Ein Anruf und ein Foto", speaker="Lena", media=[
            ec.Media(resource_id=image.id, kind=ec.MEDIA_IMAGE, caption="Segelboote im Hamburger Hafen bei Sonnenuntergang."),
            ec.Media(resource_id=audio.id, kind=ec.MEDIA_AUDIO, start=2.0, end=30.5, segments=[
                ec.TranscriptSegment(start=2.0, end=10.0, speaker="Lena", text="Das Konzert beginnt um acht Uhr."),
                ec.TranscriptSegment(start=10.0, end=30.5, speaker="张伟", text="我会带两张票。"),
            ]),
            ec.Media(resource_id=image.id, kind=ec.MEDIA_IMAGE),
        ])])
        media = res.episodes[0].media or []
        self.assertEqual(len(media), 3)
        self.assertEqual((media[1].segments or [])[1].speaker, "张伟")
        self.assertEqual(media[1].end, 30.5)
        self.assertEqual(len(res.unformed or []), 1)
        self.assertIn("episodes[0].media[2]", (res.unformed or [""])[0])
        hits = c.search(scope, "带两张票", channels=["bm25"]).hits
        self.assertTrue(hits)
        meta = hits[0].memory.metadata or {}
        self.assertEqual(meta.get("resource_id"), audio.id)
        self.assertEqual(meta["media"]["speaker"], "张伟")
        with self.assertRaises(ec.InvalidError) as cm:
            c.add_episodes(scope, [EpisodeInput(content="x", media=[ec.Media(resource_id=fake_id(7), kind=ec.MEDIA_IMAGE, caption="x")])])
        self.assertIn("media[0].resource_id", str(cm.exception))


class MemoryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.scope = Scope("acme", "app", user="memories-" + self.id().rsplit(".", 1)[-1])

    def add(self, *values: str, **kw: object) -> List[ec.Memory]:
        return self.c.add_memories(self.scope, [MemoryInput(value=v, kind="semantic", **kw) for v in values])  # type: ignore[arg-type]

    def test_lifecycle(self) -> None:
        (m,) = self.add("Anna trinkt morgens schwarzen Kaffee.", cues=["Anna", "Kaffee"], metadata={"source": "chat", "n": 12345678901234567})
        self.assertEqual(m.version, 1)
        self.assertEqual(m.status, ec.STATUS_ACTIVE)
        self.assertEqual(m.metadata, {"source": "chat", "n": 12345678901234567})

        got = self.c.get_memory(self.scope, m.id)
        self.assertEqual(got.value, "Anna trinkt morgens schwarzen Kaffee.")
        self.assertEqual(got.cues, ["Anna", "Kaffee"])

        upd = self.c.update_memory(self.scope, m.id, MemoryPatch(value="Anna trinkt grünen Tee.", reason="sie hat gewechselt"))
        self.assertEqual((upd.version, upd.value), (2, "Anna trinkt grünen Tee."))
        upd = self.c.update_memory(self.scope, m.id, importance=0.9)
        self.assertEqual((upd.version, upd.importance, upd.value), (3, 0.9, "Anna trinkt grünen Tee."))

        hist = self.c.history(self.scope, m.id)
        self.assertEqual([v.version for v in hist], [1, 2, 3])
        self.assertEqual(hist[1].reason, "sie hat gewechselt")
        self.assertEqual(hist[1].op, "UPDATE")
        assert hist[1].new is not None
        self.assertEqual(hist[1].new.value, "Anna trinkt grünen Tee.")

        back = self.c.rollback(self.scope, m.id, 1, reason="undo")
        self.assertEqual(back.value, "Anna trinkt morgens schwarzen Kaffee.")
        self.assertEqual(back.version, 4)

        self.c.delete_memory(self.scope, m.id, reason="veraltet")
        self.assertEqual(self.c.get_memory(self.scope, m.id).status, ec.STATUS_DELETED)
        self.assertNotIn(m.id, [x.id for x in self.c.list_memories(self.scope).items])
        restored = self.c.restore_memory(self.scope, m.id, reason="doch noch gültig")
        self.assertEqual(restored.status, ec.STATUS_ACTIVE)

        self.c.delete_memory(self.scope, m.id, hard=True)
        with self.assertRaises(ec.NotFoundError):
            self.c.get_memory(self.scope, m.id)
        with self.assertRaises(ec.NotFoundError):
            self.c.history(self.scope, m.id)

    def test_supersede(self) -> None:
        (old,) = self.add("李雷住在北京。")
        at = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
        res = self.c.supersede_memory(self.scope, old.id, MemoryInput(value="李雷搬到了上海。", kind="semantic"), at=at, reason="搬家")
        self.assertEqual(res.old.status, ec.STATUS_SUPERSEDED)
        self.assertEqual(res.old.superseded_by, res.new.id)
        self.assertEqual(res.new.value, "李雷搬到了上海。")
        self.assertEqual(res.new.status, ec.STATUS_ACTIVE)
        current = [m.id for m in self.c.list_memories(self.scope).items]
        self.assertEqual(current, [res.new.id])
        everything = self.c.list_memories(self.scope, MemoryFilter(statuses=["active", "superseded"])).items
        self.assertEqual({m.id for m in everything}, {old.id, res.new.id})

    def test_list_filters_and_paging(self) -> None:
        ms = self.add(*[f"Notiz {i} über Zürich" for i in range(5)], metadata={"city": "Zürich"})
        (other,) = self.c.add_memories(self.scope, [MemoryInput(value="Procedure: water the plants", kind="procedural", metadata={"city": "Wien"})])
        ids = {m.id for m in ms}

        self.assertEqual({m.id for m in self.c.list_memories(self.scope, {"kinds": ["semantic"]}).items}, ids)
        self.assertEqual({m.id for m in self.c.list_memories(self.scope, MemoryFilter(metadata={"city": "Zürich"})).items}, ids)
        self.assertEqual([m.id for m in self.c.list_memories(self.scope, MemoryFilter(metadata_in={"city": ["Wien", "Graz"]})).items], [other.id])
        self.assertEqual([m.id for m in self.c.list_memories(self.scope, MemoryFilter(contains="Notiz 3")).items], [ms[3].id])
        self.assertEqual([m.id for m in self.c.list_memories(self.scope, MemoryFilter(ids=[ms[1].id])).items], [ms[1].id])

        # More ids than a URL carries: the client sends the POST form.
        many = [fake_id(i) for i in range(150)] + [ms[0].id, other.id]
        got = self.c.list_memories(self.scope, MemoryFilter(ids=many)).items
        self.assertEqual({m.id for m in got}, {ms[0].id, other.id})
        posted = self.c.list_memories_post(self.scope, MemoryFilter(kinds=["procedural"]))
        self.assertEqual([m.id for m in posted.items], [other.id])

        p1 = self.c.list_memories(self.scope, MemoryFilter(limit=4))
        self.assertEqual(len(p1.items), 4)
        self.assertIsNotNone(p1.next)
        p2 = self.c.list_memories(self.scope, MemoryFilter(limit=4, cursor=p1.next))
        self.assertEqual(len(p2.items), 2)
        self.assertIsNone(p2.next)
        p2post = self.c.list_memories_post(self.scope, MemoryFilter(limit=4, cursor=p1.next))
        self.assertEqual([m.id for m in p2post.items], [m.id for m in p2.items])
        all_ids = [m.id for m in self.c.iter_memories(self.scope, MemoryFilter(limit=1))]
        self.assertEqual(sorted(all_ids), sorted(ids | {other.id}))

    def test_search(self) -> None:
        self.add("Ben spielt jeden Samstag Fußball im Park.", "本喜欢吃北京烤鸭。", "Ben works as a nurse in Leeds.")
        res = self.c.search(self.scope, "Fußball", k=2, explain=True)
        self.assertTrue(res.hits)
        self.assertEqual(res.hits[0].memory.value, "Ben spielt jeden Samstag Fußball im Park.")
        self.assertTrue(res.hits[0].explain)
        self.assertIsInstance(res.hits[0].explain[0], ec.ChannelHit)  # type: ignore[index]
        self.assertLessEqual(len(res.hits), 2)

        res = self.c.search(self.scope, "烤鸭", budget=200, channels=["bm25"], decay=False, now="2030-01-01T00:00:00Z")
        self.assertEqual(res.hits[0].memory.value, "本喜欢吃北京烤鸭。")
        self.assertIn("本喜欢吃北京烤鸭。", res.context or "")
        self.assertGreater(res.tokens or 0, 0)

        res = self.c.search(self.scope, "nurse", filter=MemoryFilter(contains="Leeds"))
        self.assertEqual([h.memory.value for h in res.hits], ["Ben works as a nurse in Leeds."])

        res = self.c.search(self.scope, "Fußball", mode="agentic", steps=2, llm_calls=0, llm_tokens=100)
        self.assertEqual(res.hits[0].memory.value, "Ben spielt jeden Samstag Fußball im Park.")
        assert res.trace is not None
        self.assertIsInstance(res.trace[0], ec.AgentStep)
        self.assertEqual(res.trace[0].action, "search")
        self.assertEqual(res.trace[-1].action, "stop")
        with self.assertRaises(ec.InvalidError) as bad:
            self.c.search(self.scope, "Fußball", mode="agentic", steps=99)
        self.assertIn("steps", bad.exception.message)

    def test_profile(self) -> None:
        (core,) = self.c.add_memories(self.scope, [MemoryInput(value="Hanna ist Vegetarierin.", kind="core", importance=0.9)])
        prof = self.c.profile(self.scope)
        self.assertIn(core.id, [m.id for m in prof.memories])
        self.assertIsInstance(prof.traits, list)
        self.assertIsInstance(prof.states, list)

    def test_conflicts(self) -> None:
        a, b = self.add("Lena wohnt in Hamburg.", "Lena wohnt in Bremen.")
        mark = {"conflict": a.id, "conflict_state": "open"}
        self.c.update_memory(self.scope, a.id, metadata=mark)
        self.c.update_memory(self.scope, b.id, metadata=mark)
        conflicts = self.c.list_conflicts(self.scope)
        self.assertEqual([c.id for c in conflicts], [a.id])
        self.assertEqual({m.id for m in conflicts[0].memories}, {a.id, b.id})

        res = self.c.resolve_conflict(self.scope, a.id, keep=b.id, reason="umgezogen")
        self.assertEqual(res.kept.id, b.id)
        assert res.other is not None
        self.assertEqual(res.other.id, a.id)
        self.assertEqual(res.other.status, ec.STATUS_SUPERSEDED)
        self.assertEqual(self.c.list_conflicts(self.scope), [])
        with self.assertRaises(ec.NotFoundError):
            self.c.resolve_conflict(self.scope, a.id, keep=b.id)

    def test_vault(self) -> None:
        (v,) = self.c.add_memories(self.scope, [MemoryInput(value="PIN 4711", kind=ec.KIND_VAULT)])
        with self.assertRaises(ec.NotFoundError):
            self.c.get_memory(self.scope, v.id)
        self.assertEqual(self.c.get_memory(self.scope, v.id, vault=True).value, "PIN 4711")
        self.assertIn(v.id, [m.id for m in self.c.list_memories(self.scope, vault=True).items])
        self.assertNotIn(v.id, [m.id for m in self.c.list_memories(self.scope).items])
        self.assertEqual([h.memory.id for h in self.c.search(self.scope, "PIN", vault=True).hits], [v.id])
        self.assertEqual(len(self.c.history(self.scope, v.id, vault=True)), 1)
        self.c.delete_memory(self.scope, v.id, vault=True)
        self.assertEqual(self.c.restore_memory(self.scope, v.id, vault=True).status, ec.STATUS_ACTIVE)

    def test_actor(self) -> None:
        (m,) = self.add("Tom mag Jazz.")
        self.c.with_actor("agent-lisa").update_memory(self.scope, m.id, value="Tom mag Jazz und Blues.")
        hist = self.c.history(self.scope, m.id)
        self.assertEqual(hist[-1].actor, "agent-lisa")
        self.assertIsNone(self.c.actor)


class ScopeTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()

    def fill(self, scope: Scope) -> None:
        self.c.add_episodes(
            scope,
            [
                EpisodeInput(content="Jürgen fährt im Winter nach Österreich zum Skifahren.", role="user"),
                EpisodeInput(content="王芳每天早上跑步五公里。", role="user", metadata={"ort": "Straße", "数": 3.25}),
            ],
        )
        self.c.add_memories(scope, [MemoryInput(value="Größe: 1,80 m — 身高一米八", kind="core", metadata={"ü": ["ß", 1]})])

    def test_export_import_round_trip(self) -> None:
        scope = Scope("acme", "app", user="exporter")
        self.fill(scope)
        before = list(self.c.export(scope))
        types = [r.type for r in before]
        self.assertIn("episode", types)
        self.assertIn("memory", types)
        self.assertIn("version", types)
        self.assertIn("audit", types)
        self.assertTrue(all(isinstance(r, ec.Record) for r in before))

        counts = self.c.delete_scope(scope)
        self.assertEqual(counts.episodes, 2)
        self.assertGreaterEqual(counts.memories, 1)
        # The audit log outlives a deletion; everything else is gone.
        self.assertEqual([r.type for r in self.c.export(scope) if r.type != "audit"], [])

        res = self.c.import_records(scope, before)
        self.assertEqual(res.episodes, types.count("episode"))
        self.assertEqual(res.memories, types.count("memory"))
        self.assertEqual(res.versions, types.count("version"))
        # The audit entries outlived the deletion, so are skipped as identical.
        self.assertEqual((res.audit, res.skipped), (0, types.count("audit")))
        self.assertEqual(res.renamed, {})
        after = list(self.c.export(scope))
        key = lambda r: (r.type, r.to_dict()[r.type]["id" if r.type != "version" else "memory_id"], str(r.to_dict()))  # noqa: E731
        self.assertEqual(
            sorted(key(r) for r in after if r.type != "audit"), sorted(key(r) for r in before if r.type != "audit")
        )
        eps = {r.episode.content for r in after if r.episode is not None}
        self.assertIn("王芳每天早上跑步五公里。", eps)
        self.assertIn("Jürgen fährt im Winter nach Österreich zum Skifahren.", eps)
        mem = [r.memory for r in after if r.memory is not None and r.memory.kind == "core"][0]
        self.assertEqual(mem.value, "Größe: 1,80 m — 身高一米八")
        self.assertEqual(mem.metadata, {"ü": ["ß", 1]})

        again = self.c.import_records(scope, [r.to_dict() for r in before])
        self.assertEqual(again.skipped, len(before))
        self.assertEqual((again.episodes, again.memories, again.versions), (0, 0, 0))

        # Leaving the loop early closes the stream.
        for _ in self.c.export(scope):
            break

    def test_delete_scope(self) -> None:
        scope = Scope("acme", "app", user="purged")
        keep = Scope("acme", "app", user="kept")
        self.fill(scope)
        self.fill(keep)
        counts = self.c.delete_scope(scope)
        self.assertIsInstance(counts, ec.PurgeCounts)
        self.assertEqual(counts.episodes, 2)
        self.assertGreaterEqual(counts.versions, counts.memories)
        self.assertEqual(self.c.list_memories(scope).items, [])
        self.assertEqual(len(self.c.list_episodes(keep).items), 2)

    def test_list_scopes(self) -> None:
        self.fill(Scope("acme", "app", user="listed-Jürgen"))
        self.fill(Scope("acme", "app", user="listed-王芳", session="s1"))
        res = self.c.list_scopes()
        self.assertEqual((res.tenant.org, res.tenant.project), ("acme", "app"))
        mine = {(s.namespace.user, s.namespace.session): s for s in res.scopes if (s.namespace.user or "").startswith("listed-")}
        self.assertEqual(set(mine), {("listed-Jürgen", None), ("listed-王芳", "s1")})
        self.assertGreaterEqual(mine[("listed-王芳", "s1")].memories, 3)
        self.assertTrue(mine[("listed-王芳", "s1")].last_activity)
        with self.assertRaises(ec.ForbiddenError):
            self.c.list_scopes(org="globex")

    def test_audit(self) -> None:
        scope = Scope("acme", "app", user="audited")
        self.fill(scope)
        entries = list(self.c.iter_audit(scope, limit=1))
        self.assertGreaterEqual(len(entries), 2)
        ops = {e.op for e in entries}
        self.assertIn("episode.add", ops)
        self.assertIn("memory.add", ops)
        only = self.c.audit(scope, ops=["episode.add"]).items
        self.assertTrue(only)
        self.assertEqual({e.op for e in only}, {"episode.add"})
        self.assertEqual(self.c.audit(scope, after="2999-01-01T00:00:00Z").items, [])
        self.assertTrue(self.c.audit(scope, before=dt.datetime(2999, 1, 1)).items)


class EmbeddingsTest(unittest.TestCase):
    def test_embeddings(self) -> None:
        c = client()
        res = c.embeddings(["Guten Morgen", "早上好", "Buenos días"])
        self.assertEqual(res.object, "list")
        self.assertEqual([e.index for e in res.data], [0, 1, 2])
        vec = res.data[0].embedding
        assert isinstance(vec, list)
        self.assertGreater(len(vec), 10)
        self.assertAlmostEqual(sum(x * x for x in vec), 1.0, places=3)
        self.assertGreater(res.usage.prompt_tokens, 0)

        b64 = c.embeddings("Guten Morgen", encoding_format="base64").data[0].embedding
        assert isinstance(b64, str)
        raw = base64.b64decode(b64)
        decoded = struct.unpack("<%df" % (len(raw) // 4), raw)
        self.assertEqual(len(decoded), len(vec))
        self.assertAlmostEqual(decoded[0], vec[0], places=5)


class KeyTest(unittest.TestCase):
    def test_keys_and_user_binding(self) -> None:
        admin = client()
        ann_scope = Scope("acme", "app", user="ann")
        bob_scope = Scope("acme", "app", user="bob")
        (bobs,) = admin.add_memories(bob_scope, [MemoryInput(value="Bob's secret: he hates cilantro", kind="semantic")])

        created = admin.create_key(Namespace("acme", "app", user="ann"), ec.ROLE_WRITE, name="ann's agent")
        self.assertTrue(created.secret.startswith("ek_"))
        self.assertEqual((created.key.user, created.key.role, created.key.name), ("ann", "write", "ann's agent"))
        self.assertIn(created.key.id, [k.id for k in admin.list_keys("acme", "app")])
        self.assertEqual([k.id for k in admin.list_keys("acme", "app", user="ann")], [created.key.id])

        ann = Client(admin.base_url, created.secret)
        (mine,) = ann.add_memories(ann_scope, [MemoryInput(value="Ann mag Äpfel", kind="semantic")])
        self.assertEqual(ann.get_memory(ann_scope, mine.id).value, "Ann mag Äpfel")
        with self.assertRaises(ec.EngramError) as cm:
            ann.get_memory(bob_scope, bobs.id)
        self.assertIn(cm.exception.status, (403, 404))
        self.assertIn(cm.exception.code, (ec.FORBIDDEN, ec.NOT_FOUND))
        with self.assertRaises(ec.EngramError) as cm:
            ann.get_memory(ann_scope, bobs.id)
        self.assertEqual(cm.exception.code, ec.NOT_FOUND)
        with self.assertRaises(ec.EngramError) as cm:
            ann.list_memories(bob_scope)
        self.assertIn(cm.exception.code, (ec.FORBIDDEN, ec.NOT_FOUND))
        for attempt in (
            lambda: ann.export(bob_scope),
            lambda: ann.delete_memory(bob_scope, bobs.id, hard=True),
            lambda: ann.delete_memory(ann_scope, bobs.id, hard=True),
            lambda: ann.update_memory(ann_scope, bobs.id, value="overwritten"),
            lambda: ann.history(ann_scope, bobs.id),
        ):
            with self.assertRaises(ec.EngramError) as cm:
                attempt()
            self.assertIn(cm.exception.code, (ec.FORBIDDEN, ec.NOT_FOUND))
        self.assertEqual(admin.get_memory(bob_scope, bobs.id).value, "Bob's secret: he hates cilantro")
        self.assertEqual(admin.get_memory(bob_scope, bobs.id).version, 1)
        hits = ann.search(ann_scope, "cilantro").hits
        self.assertNotIn(bobs.id, [h.memory.id for h in hits])
        with self.assertRaises(ec.ForbiddenError):
            ann.list_keys("acme", "app")

        admin.revoke_key("acme", "app", created.key.id)
        revoked = [k for k in admin.list_keys("acme", "app") if k.id == created.key.id]
        self.assertTrue(revoked and revoked[0].revoked_at)
        with self.assertRaises(ec.UnauthorizedError) as unauth:
            ann.get_memory(ann_scope, mine.id)
        self.assertEqual(unauth.exception.status, 401)
        with self.assertRaises(ec.NotFoundError):
            admin.revoke_key("acme", "app", "no-such-key")


class GraphTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.scope = Scope("acme", "app", user="graph-" + self.id().rsplit(".", 1)[-1])

    def seed(self) -> List[ec.Memory]:
        return self.c.add_memories(
            self.scope,
            [
                MemoryInput(value="Ann moved to Porto with Bob", kind="episodic"),
                MemoryInput(value="Bob und Jürgen wohnen zusammen", kind="semantic"),
            ],
        )

    def by_name(self) -> Dict[str, ec.Entity]:
        return {e.name: e for e in self.c.iter_entities(self.scope)}

    def test_list_get_graph_delete(self) -> None:
        porto_mem, german_mem = self.seed()
        ents = self.by_name()
        self.assertTrue({"Bob", "Porto", "Jürgen"} <= set(ents), f"entities: {sorted(ents)}")
        bob, porto, jurgen = ents["Bob"], ents["Porto"], ents["Jürgen"]
        self.assertIsInstance(bob, ec.Entity)
        self.assertEqual((bob.type, bob.mentions, bob.status), (ec.ENTITY_PERSON, 2, "active"))
        self.assertEqual(bob.namespace.user, self.scope.user)
        self.assertEqual(porto.type, ec.ENTITY_PLACE)
        self.assertEqual(jurgen.normalized, "jurgen")

        self.assertEqual([e.name for e in self.c.list_entities(self.scope, type=ec.ENTITY_PLACE).items], ["Porto"])
        # The prefix is folded like the names: no umlaut matches one.
        self.assertEqual([e.id for e in self.c.list_entities(self.scope, prefix="JUR").items], [jurgen.id])
        first = self.c.list_entities(self.scope, limit=1)
        self.assertEqual(len(first.items), 1)
        self.assertIsNotNone(first.next)
        paged = [e.id for e in self.c.iter_entities(self.scope, limit=1)]
        self.assertEqual(paged, [e.id for e in self.c.list_entities(self.scope).items])
        self.assertEqual(len(paged), len(set(paged)))

        d = self.c.get_entity(self.scope, bob.id)
        self.assertIsInstance(d, ec.EntityDetail)
        self.assertEqual(d.entity.id, bob.id)
        self.assertEqual({m.id for m in d.memories}, {porto_mem.id, german_mem.id})
        self.assertIn("Bob und Jürgen wohnen zusammen", [m.value for m in d.memories])
        self.assertEqual({t.memory_id for t in d.timeline}, {porto_mem.id, german_mem.id})
        self.assertTrue(all(t.status == ec.STATUS_ACTIVE and t.at for t in d.timeline))
        others = {r.target if r.source == bob.id else r.source for r in d.relations}
        self.assertEqual(others, {porto.id, jurgen.id})
        for r in d.relations:
            self.assertIsInstance(r, ec.Relation)
            self.assertEqual(r.label, "co_occurs")
            self.assertIsNone(r.expired_at)
            self.assertTrue(r.evidence and all(isinstance(ev, ec.Evidence) for ev in r.evidence))
            self.assertAlmostEqual(r.weight, sum(ev.weight for ev in r.evidence))
        german = [r for r in d.relations if jurgen.id in (r.source, r.target)][0]
        self.assertEqual([ev.memory_id for ev in german.evidence], [german_mem.id])

        one = self.c.graph(self.scope, entity=porto.id)
        self.assertEqual({n.id for n in one.nodes}, {porto.id, bob.id})
        self.assertEqual(len(one.edges), 1)
        two = self.c.graph(self.scope, entity=porto.id, hops=2)
        self.assertEqual({n.id for n in two.nodes}, {porto.id, bob.id, jurgen.id})
        self.assertEqual(len(two.edges), 2)
        whole = self.c.graph(self.scope)
        self.assertTrue({porto.id, bob.id, jurgen.id} <= {n.id for n in whole.nodes})
        self.assertEqual(len(self.c.graph(self.scope, limit=1).edges), 1)

        self.c.delete_entity(self.scope, jurgen.id)
        with self.assertRaises(ec.NotFoundError):
            self.c.get_entity(self.scope, jurgen.id)
        self.assertNotIn("Jürgen", self.by_name())
        d = self.c.get_entity(self.scope, bob.id)
        self.assertEqual({r.target if r.source == bob.id else r.source for r in d.relations}, {porto.id})
        self.assertEqual(self.c.get_memory(self.scope, german_mem.id).value, "Bob und Jürgen wohnen zusammen")
        self.assertEqual({n.id for n in self.c.graph(self.scope, entity=porto.id, hops=2).nodes}, {porto.id, bob.id})
        with self.assertRaises(ec.NotFoundError):
            self.c.delete_entity(self.scope, jurgen.id)

    def test_split_merge_history(self) -> None:
        _, german_mem = self.seed()
        bob = self.by_name()["Bob"]
        with self.assertRaises(ec.InvalidError) as cm:
            self.c.split_entity(self.scope, bob.id, "Robert", [])
        self.assertIn("memories", str(cm.exception))
        new = self.c.split_entity(self.scope, bob.id, "Robert", [german_mem.id])
        self.assertEqual((new.name, new.mentions, new.type), ("Robert", 1, ec.ENTITY_PERSON))
        self.assertEqual(self.c.get_entity(self.scope, bob.id).entity.mentions, 1)
        with self.assertRaises(ec.InvalidError) as cm:
            self.c.merge_entities(self.scope, bob.id, [bob.id])
        self.assertIn("from", str(cm.exception))
        merged = self.c.merge_entities(self.scope, bob.id, [new.id])
        self.assertEqual(merged.mentions, 2)
        self.assertIn("Robert", merged.aliases or [])
        with self.assertRaises(ec.NotFoundError):
            self.c.get_entity(self.scope, new.id)
        gone = self.c.entity_history(self.scope, new.id)
        self.assertEqual([v.op for v in gone], ["split", "merged"])
        self.assertIsInstance(gone[0], ec.EntityVersion)
        self.assertEqual(gone[1].related, [bob.id])
        self.assertEqual([v.op for v in self.c.entity_history(self.scope, bob.id)][-2:], ["split", "merge"])

    def test_bad_arguments(self) -> None:
        self.seed()
        bob = self.by_name()["Bob"]
        with self.assertRaises(ec.NotFoundError):
            self.c.get_entity(self.scope, fake_id(7))
        with self.assertRaises(ec.NotFoundError):
            self.c.graph(self.scope, entity=fake_id(7))
        with self.assertRaises(ec.InvalidError) as cm:
            self.c.graph(self.scope, entity=bob.id, hops=3)
        self.assertEqual(cm.exception.status, 400)
        self.assertIn("hops", cm.exception.message)
        with self.assertRaises(ec.InvalidError) as cm:
            self.c.get_entity(self.scope, " ")
        self.assertEqual(cm.exception.status, 0)
        self.assertIn("entity id", cm.exception.message)
        agent_scope = Scope("acme", "app", user=self.scope.user, agent="helper")
        with self.assertRaises(ec.InvalidError):
            self.c.delete_entity(agent_scope, bob.id)
        self.assertEqual(self.c.get_entity(self.scope, bob.id).entity.name, "Bob")

    def test_user_bound_key_sees_only_its_users_entities(self) -> None:
        admin = self.c
        ann_scope = Scope("acme", "app", user="graph-ann")
        bob_scope = Scope("acme", "app", user="graph-bob")
        admin.add_memories(ann_scope, [MemoryInput(value="Ann moved to Porto with Bob", kind="episodic")])
        admin.add_memories(bob_scope, [MemoryInput(value="Bob met Carla in Lisbon", kind="episodic")])
        bobs = {e.name: e for e in admin.iter_entities(bob_scope)}
        self.assertIn("Carla", bobs)
        carla = bobs["Carla"]

        created = admin.create_key(Namespace("acme", "app", user="graph-ann"), ec.ROLE_WRITE)
        ann = Client(admin.base_url, created.secret)
        mine = {e.id for e in ann.iter_entities(ann_scope)}
        self.assertTrue(mine)
        self.assertFalse(mine & {e.id for e in bobs.values()})
        self.assertFalse({n.id for n in ann.graph(ann_scope).nodes} & {e.id for e in bobs.values()})
        for attempt in (
            lambda: ann.list_entities(bob_scope),
            lambda: ann.get_entity(bob_scope, carla.id),
            lambda: ann.get_entity(ann_scope, carla.id),
            lambda: ann.graph(bob_scope),
            lambda: ann.graph(ann_scope, entity=carla.id),
            lambda: ann.delete_entity(bob_scope, carla.id),
            lambda: ann.delete_entity(ann_scope, carla.id),
        ):
            with self.assertRaises(ec.EngramError) as cm:
                attempt()
            self.assertIn(cm.exception.code, (ec.FORBIDDEN, ec.NOT_FOUND))
        self.assertEqual(admin.get_entity(bob_scope, carla.id).entity.name, "Carla")

    def test_communities(self) -> None:
        self.seed()
        self.c.add_memories(self.scope, [MemoryInput(value="Ann, Bob und Jürgen kochten in Porto.", kind="episodic")])
        res = self.c.refresh_communities(self.scope, full=True)
        self.assertIsInstance(res, ec.RefreshResult)
        self.assertTrue(res.full)
        self.assertGreaterEqual(res.written, 1)
        again = self.c.refresh_communities(self.scope)
        self.assertEqual((again.dirty, again.written, again.total), (0, 0, res.total))
        cs = self.c.list_communities(self.scope)
        self.assertEqual(len(cs), res.total)
        bob = self.by_name()["Bob"]
        mine = [c for c in cs if bob.id in c.members]
        self.assertEqual(len(mine), 1, f"communities: {cs}")
        c = mine[0]
        self.assertIsInstance(c, ec.Community)
        self.assertIn("Bob", c.names)
        self.assertTrue(c.summary.startswith(", ".join(c.names)))
        self.assertTrue(c.sources)
        d = self.c.get_community(self.scope, c.id)
        self.assertIsInstance(d, ec.CommunityDetail)
        self.assertEqual(sorted(e.id for e in d.entities), c.members)
        nodes = {n.id: n.community for n in self.c.graph(self.scope).nodes}
        self.assertEqual(nodes[bob.id], c.id)
        with self.assertRaises(ec.NotFoundError):
            self.c.get_community(Scope("acme", "app", user="graph-nobody"), c.id)
        with self.assertRaises(ec.InvalidError):
            self.c.refresh_communities(Scope("acme", "app", user=self.scope.user, session="s1"))


if __name__ == "__main__":
    unittest.main()


class IdentityTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.scope = Scope("acme", "app", user="identities-" + self.id().rsplit(".", 1)[-1])

    def test_observe_link_search_merge_split(self) -> None:
        ep = self.c.add_episodes(self.scope, [EpisodeInput(content="El barco volcó cerca del muelle.", role="user")]).episodes[0]

        def near(axis: int, k: int) -> List[float]:
            v = [0.0] * 8
            v[axis], v[(axis + 1 + k) % 8] = 1.0, 0.1
            return v

        obs = [ec.ObservationInput(modality="face", embedding=near(0, k), episode_id=ep.id) for k in range(3)]
        obs += [ec.ObservationInput(modality="face", embedding=near(4, k)) for k in range(2)]
        res = self.c.add_observations(self.scope, obs)
        a, b = res.observations[0].identity_id, res.observations[3].identity_id
        self.assertNotEqual(a, b)
        self.assertEqual(res.observations[2].identity_id, a)
        with self.assertRaises(ec.InvalidError) as cm:
            self.c.add_observations(self.scope, [ec.ObservationInput(modality="face", embedding=[1.0, 2.0])])
        self.assertIn("observations[0].embedding", str(cm.exception))

        p = self.c.link_identities(self.scope, identities=[a], name="María")
        self.c.link_identities(self.scope, person_id=p.id, name="Mari")
        hits = self.c.search(self.scope, "¿Qué le pasó a Mari?", channels=["identity"]).hits
        self.assertTrue(hits and hits[0].memory.sources == [ep.id], hits)
        detail = self.c.get_identity(self.scope, a)
        self.assertEqual(len(detail.observations), 3)
        self.assertEqual([e.id for e in detail.episodes or []], [ep.id])

        merged = self.c.merge_identities(self.scope, a, [b])
        self.assertEqual(merged.count, 5)
        split = self.c.split_identity(self.scope, a, [res.observations[3].id, res.observations[4].id], label="otro")
        self.assertEqual(split.count, 2)
        self.assertEqual(self.c.unlink_identity(self.scope, a).person_id or "", "")
        ops = [e.op for e in self.c.identity_history(self.scope, a)]
        self.assertEqual(ops, ["create", "link", "merge", "split", "unlink"])
        self.assertEqual(self.c.list_persons(self.scope), [])
        self.assertEqual({i.id for i in self.c.list_identities(self.scope, modality="face")}, {a, split.id})
        self.c.delete_identity(self.scope, split.id)
        with self.assertRaises(ec.NotFoundError):
            self.c.get_identity(self.scope, split.id)
