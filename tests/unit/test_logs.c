/* test_logs.c - the server log line parser and the fold into load events:
 * each era's load lines, the storage prefixes, memory figures, failures,
 * and broken lines that must warn without inventing a load. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "ollama_audit/history.h"
#include "ollama_audit/logline.h"
#include "history/serves.h"
#include "base/util.h"
#include "testutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEX_A "a9d0a3e1c2b4f5061728394a5b6c7d8e9f00112233445566778899aabbccddee"
#define HEX_B "8c625c9569c3c799f5f9595b5a141f91d224233055608189d66746347c14e613"
#define HEX_C "87048bcd55216712ef14c11c2c303728463207b165bf18440b9b84b07ec00f87"

static oa_log_line L;
static char why[160];

static int parse(const char *s)
{
	return oa_log_parse_line(s, strlen(s), &L, why, sizeof why);
}

static void test_time(void)
{
	int64_t ns;
	int tz;
	const char *a = "2024-09-26T18:08:31.326+02:00";
	CHECK(oa_log_parse_time(a, strlen(a), &ns, &tz) == strlen(a));
	CHECK(ns == 1727366911326000000LL);
	CHECK(tz == 120);
	const char *b = "2025-03-05T06:58:54.116Z rest";
	CHECK(oa_log_parse_time(b, strlen(b), &ns, &tz) == 24);
	CHECK(ns == 1741157934116000000LL && tz == 0);
	const char *c = "2026-10-22T09:15:02.5-0700";
	CHECK(oa_log_parse_time(c, strlen(c), &ns, &tz) == strlen(c));
	CHECK(ns == 1792685702500000000LL && tz == -420);
	const char *bad[] = { "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "1969-12-31T23:59:59Z",
	                      "2024-01-01T00:00:00", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00.Z",
	                      "2024-01-01T00:00:00+2", "2024-1-01T00:00:00Z", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(oa_log_parse_time(bad[i], strlen(bad[i]), &ns, &tz) == 0);
	/* Cut short: never reads past n. */
	CHECK(oa_log_parse_time(a, 20, &ns, &tz) == 0);
}

static void test_size_digest(void)
{
	uint64_t b;
	CHECK(oa_log_parse_size("5.8 GiB", &b) == 0 && b == 6227702579ULL);
	CHECK(oa_log_parse_size("[29.5 GiB]", &b) == 0 && b == 31675383808ULL);
	CHECK(oa_log_parse_size("787.5 MiB", &b) == 0 && b == 825753600ULL);
	CHECK(oa_log_parse_size("0 B", &b) == 0 && b == 0);
	CHECK(oa_log_parse_size("1.5 GB", &b) == 0 && b == 1500000000ULL);
	CHECK(oa_log_parse_size("GiB", &b) < 0);
	CHECK(oa_log_parse_size("5 parsecs", &b) < 0);
	CHECK(oa_log_parse_size("99999999999999999999 TiB", &b) < 0);
	char hex[65];
	CHECK(oa_log_blob_digest("/Users/me/.ollama/models/blobs/sha256-" HEX_A, hex));
	CHECK_STR(hex, HEX_A);
	CHECK(oa_log_blob_digest("O:\\models\\blobs\\sha256:" HEX_B " --x", hex));
	CHECK_STR(hex, HEX_B);
	CHECK(!oa_log_blob_digest("/blobs/sha256-abc", hex));
	CHECK(!oa_log_blob_digest("/blobs/sha256-" HEX_A "0", hex)); /* 65 hex: not a digest */
}

static void test_eras(void)
{
	/* 2024: journalctl text export, ollama_llama_server. */
	CHECK(parse("Sep 26 18:08:31 pc-1 ollama[3886]: time=2024-09-26T18:08:31.326+02:00 level=INFO "
	            "source=server.go:388 msg=\"starting llama server\" cmd=\"/tmp/ollama1/runners/cuda_v12/"
	            "ollama_llama_server --model /usr/share/ollama/.ollama/models/blobs/sha256-" HEX_A
	            " --ctx-size 8192 --port 4242\"") == 0);
	CHECK(L.kind == OA_LOG_LOAD && L.runner == OA_LR_LLAMACPP && L.has_time);
	CHECK(L.time_ns == 1727366911326000000LL);
	CHECK_STR(L.digest, HEX_A);
	CHECK_STR(L.model, "/usr/share/ollama/.ollama/models/blobs/sha256-" HEX_A);
	/* 2025: docker logs -t, `ollama runner`. */
	CHECK(parse("2025-03-05T06:58:54.116093514Z time=2025-03-05T06:58:54.116Z level=INFO source=server.go:380 "
	            "msg=\"starting llama server\" cmd=\"/usr/bin/ollama runner --model /root/.ollama/models/"
	            "blobs/sha256-" HEX_B " --ctx-size 8192 --parallel 1\"") == 0);
	CHECK(L.kind == OA_LOG_LOAD && L.runner == OA_LR_LLAMACPP);
	CHECK_STR(L.digest, HEX_B);
	/* Ollama's engine, Windows paths in a quoted value. */
	CHECK(parse("time=2025-08-24T08:08:58.488Z level=INFO source=server.go:383 msg=\"starting runner\" "
	            "cmd=\"C:\\\\Program Files\\\\Ollama\\\\ollama.exe runner --ollama-engine --model "
	            "O:\\\\models\\\\blobs\\\\sha256-" HEX_C " --port 64741\"") == 0);
	CHECK(L.kind == OA_LOG_LOAD && L.runner == OA_LR_OLLAMA);
	CHECK_STR(L.model, "O:\\models\\blobs\\sha256-" HEX_C);
	/* 0.3x-0.40: the hint, then llama-server. */
	CHECK(parse("time=2026-10-22T09:15:02.5-07:00 level=INFO source=server.go:107 "
	            "msg=\"using llama-server for model\" model=/Users/me/.ollama/models/blobs/sha256-" HEX_A) == 0);
	CHECK(L.kind == OA_LOG_HINT && L.runner == OA_LR_LLAMACPP && L.tz_min == -420);
	CHECK_STR(L.digest, HEX_A);
	CHECK(parse("time=2026-10-22T09:15:02.6-07:00 level=INFO source=llama_server.go:457 "
	            "msg=\"starting llama-server\" cmd=\"/Applications/Ollama.app/Contents/Resources/llama-server "
	            "--model /Users/me/.ollama/models/blobs/sha256-" HEX_A " --port 53511\"") == 0);
	CHECK(L.kind == OA_LOG_LOAD && L.runner == OA_LR_LLAMACPP);
	/* MLX. */
	CHECK(parse("time=2026-10-22T09:20:00Z level=INFO source=client.go:508 "
	            "msg=\"starting mlx runner subprocess\" model=qwen3.5:4b port=53510") == 0);
	CHECK(L.kind == OA_LOG_LOAD && L.runner == OA_LR_MLX);
	CHECK_STR(L.model, "qwen3.5:4b");
	CHECK(L.digest[0] == '\0');
	CHECK(parse("time=2026-10-22T09:20:01Z level=INFO source=server.go:46 msg=\"MLX engine initialized\" "
	            "\"MLX version\"=0.32.3-96-gbebd642 device=gpu") == 0);
	CHECK(L.kind == OA_LOG_ENGINE && L.runner == OA_LR_MLX);
	CHECK(parse("time=2026-04-10T13:31:52.939+05:30 level=WARN source=server.go:164 msg=mlx-runner "
	            "msg=\"time=2026-04-10T13:31:52.939+05:30 level=INFO msg=\\\"starting mlx runner\\\" "
	            "model=x/flux2-klein:latest port=53670 mode=imagegen\"") == 0);
	CHECK(L.kind == OA_LOG_LOAD && L.runner == OA_LR_MLX);
	CHECK_STR(L.model, "x/flux2-klein:latest");
	/* Results. */
	CHECK(parse("time=2024-08-17T14:13:22.547Z level=INFO source=server.go:632 "
	            "msg=\"llama runner started in 2.26 seconds\"") == 0 && L.kind == OA_LOG_LOADED);
	CHECK(parse("time=2026-10-22T09:20:03Z level=INFO msg=\"mlx runner is ready\"") == 0 &&
	      L.kind == OA_LOG_LOADED);
	CHECK(parse("time=2025-07-16T20:07:57.610+02:00 level=ERROR source=sched.go:489 "
	            "msg=\"error loading llama server\" error=\"llama runner process has terminated: exit status 2\"") == 0);
	CHECK(L.kind == OA_LOG_FAILED);
	CHECK_STR(L.reason, "llama runner process has terminated: exit status 2");
	CHECK(parse("time=2026-10-22T10:00:00Z level=WARN source=sched.go:300 msg=\"unable to load\" "
	            "error=\"model requires 20.1 GiB but only 12.0 GiB are available\"") == 0);
	CHECK(L.kind == OA_LOG_FAILED);
	CHECK_STR(L.reason, "model requires 20.1 GiB but only 12.0 GiB are available");
	/* Versions, with and without slog. */
	CHECK(parse("time=2026-10-22T08:00:00Z level=INFO source=routes.go:1600 "
	            "msg=\"Listening on 127.0.0.1:11434 (version 0.40.8)\"") == 0);
	CHECK(L.kind == OA_LOG_VERSION);
	CHECK_STR(L.version, "0.40.8");
	CHECK(parse("Dec 15 15:33:10 h ollama[25174]: 2023/12/15 15:33:10 routes.go:871: Listening on "
	            "127.0.0.1:11434 (version 0.1.17)") == 0);
	CHECK(L.kind == OA_LOG_VERSION && !L.has_time);
	CHECK_STR(L.version, "0.1.17");
	/* Memory. */
	CHECK(parse("ollama-1  | time=2025-06-05T12:36:11.458Z level=INFO source=server.go:168 msg=offload "
	            "library=cpu layers.requested=-1 memory.available=\"[29.5 GiB]\" "
	            "memory.required.full=\"10.5 GiB\" memory.required.kv=\"1.3 GiB\"") == 0);
	CHECK(L.kind == OA_LOG_MEMORY && L.has_time);
	CHECK_U64(L.mem_required, 11274289152ULL);
	CHECK_U64(L.mem_gpu_free, 31675383808ULL);
	CHECK(parse("time=2026-10-22T09:21:00Z level=INFO msg=\"request done\" \"memory peak\"=\"3.85 GiB\"") == 0);
	CHECK(L.kind == OA_LOG_MEMORY && L.mem_peak > 4000000000ULL);
	/* Not ours: GIN and llama.cpp output. */
	CHECK(parse("[GIN] 2024/08/17 - 14:13:22 | 200 |  2.287724508s |       127.0.0.1 | POST \"/api/chat\"") == 0);
	CHECK(L.kind == OA_LOG_NONE);
	CHECK(parse("llama_model_loader: loaded meta data with 39 key-value pairs") == 0 && L.kind == OA_LOG_NONE);
}

static void test_garbage(void)
{
	CHECK(parse("time=yesterday level=INFO msg=\"starting llama server\"") < 0);
	CHECK(why[0] != '\0');
	/* Truncated: the load still counts, its model read from what is left. */
	CHECK(parse("time=2025-03-05T06:58:54Z level=INFO msg=\"starting llama server\" "
	            "cmd=\"/usr/bin/ollama runner --model /r/blobs/sha256-" HEX_B " --ctx") < 0);
	CHECK(L.kind == OA_LOG_LOAD);
	CHECK_STR(L.digest, HEX_B);
	CHECK(parse("time=2026-10-22T09:20:00Z level=INFO msg=\"starting mlx runner subprocess\" port=1") < 0);
	static const char bin[] = "time=2024-01-01T00:00:00Z msg=\"a\\x00\0\xff\xfe\" \"\\";
	CHECK(oa_log_parse_line(bin, sizeof bin - 1, &L, why, sizeof why) < 0);
	CHECK(parse("time=2024-01-01T00:00:00Z msg=\"\\u12\"") < 0);
	/* Found by the fuzzer: a failure with an empty error= still says why. */
	CHECK(parse("time=2025-03-05T06:58:55Z level=ERROR msg=\"error loading llama server\" error= x") == 0);
	CHECK(L.kind == OA_LOG_FAILED);
	CHECK_STR(L.reason, "(no reason logged)");
	char big[40000];
	memset(big, 'x', sizeof big);
	memcpy(big, "time=2024-01-01T00:00:00Z msg=\"", 31);
	CHECK(oa_log_parse_line(big, sizeof big, &L, why, sizeof why) < 0);
}

static void feed(oa_history *h, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		oa_history_line(h, lines[i], strlen(lines[i]), i + 1, -1);
}

/* A history of these lines, as one server.log. */
static void read_lines(oa_history *h, const char *const *lines, size_t n)
{
	oa_history_init(h);
	oa_history_begin(h, "server.log");
	feed(h, lines, n);
	oa_history_end(h);
}

static void test_fold(void)
{
	static const char *const lines[] = {
		"time=2026-10-22T08:00:00Z level=INFO msg=\"Listening on 127.0.0.1:11434 (version 0.40.8)\"",
		"time=2026-10-22T09:15:02Z level=INFO msg=\"using llama-server for model\" model=/u/blobs/sha256-" HEX_A,
		"time=2026-10-22T09:15:02Z level=INFO msg=\"starting llama-server\" cmd=\"/x/llama-server --model /u/blobs/sha256-" HEX_A " --port 1\"",
		"time=2026-10-22T09:15:02Z level=INFO msg=\"system memory\" total=\"32.0 GiB\" free=\"25.0 GiB\" free_swap=\"0 B\"",
		"time=2026-10-22T09:15:02Z level=INFO msg=\"loading model via llama-server\" model=/u/blobs/sha256-" HEX_A,
		"time=2026-10-22T09:15:04Z level=INFO msg=\"llama runner started in 2.01 seconds\"",
		"time=2026-10-22T09:20:00Z level=INFO msg=\"starting mlx runner subprocess\" model=qwen3.5:4b port=2",
		"time=2026-10-22T09:20:01Z level=INFO msg=\"MLX engine initialized\"",
		"time=2026-10-22T09:20:02Z level=INFO msg=\"mlx runner is ready\"",
		"time=2026-10-22T09:21:00Z level=INFO msg=done \"memory peak\"=\"3.85 GiB\"",
		"garbage \x01\x02 time=",
		"time=2026-10-22T10:00:00Z level=ERROR msg=\"error loading llama server\" error=\"no suitable llama servers found\"",
		"time=bad",
	};
	oa_history h;
	read_lines(&h, lines, sizeof lines / sizeof lines[0]);
	CHECK_U64(h.n, 3);
	CHECK(h.v[0].runner == OA_LR_LLAMACPP && h.v[0].result == OA_LOAD_OK);
	CHECK_STR(h.v[0].digest, HEX_A);
	CHECK_STR(h.v[0].version, "0.40.8");
	CHECK_U64(h.v[0].mem_sys_total, 32ULL << 30);
	CHECK_U64(h.v[0].line, 2);
	CHECK(h.v[1].runner == OA_LR_MLX && h.v[1].result == OA_LOAD_OK);
	CHECK_STR(h.v[1].logged, "qwen3.5:4b");
	CHECK(h.v[1].mem_peak > 4000000000ULL && h.v[0].mem_peak == 0);
	CHECK(h.v[2].result == OA_LOAD_FAILED && h.v[2].logged[0] == '\0');
	CHECK_STR(h.v[2].reason, "no suitable llama servers found");
	CHECK_U64(h.n_warnings, 2);
	CHECK_STR(h.warnings[0], "server.log:11: binary data (byte 0x01), not a log line");
	CHECK_STR(h.warnings[1], "server.log:13: a slog line whose time= is not an RFC 3339 time");
	CHECK(h.any_time && h.first_ns < h.last_ns);
	oa_history_match(&h, NULL); /* sorts newest first */
	CHECK(h.v[0].result == OA_LOAD_FAILED && h.v[2].runner == OA_LR_LLAMACPP);
	oa_history_free(&h);
}

/* 0.40's llama-server logs no success line we know: two loads of one model
 * are still two loads, and the detail line after a start is not a third. */
static void test_repeat_without_result(void)
{
	static const char *const lines[] = {
		"time=2026-10-22T09:00:00Z level=INFO msg=\"using llama-server for model\" model=/u/blobs/sha256-" HEX_A,
		"time=2026-10-22T09:00:00Z level=INFO msg=\"starting llama-server\" cmd=\"/x/llama-server --model /u/blobs/sha256-" HEX_A "\"",
		"time=2026-10-22T09:00:01Z level=INFO msg=\"loading model via llama-server\" model=/u/blobs/sha256-" HEX_A,
		"time=2026-10-22T11:00:00Z level=INFO msg=\"using llama-server for model\" model=/u/blobs/sha256-" HEX_A,
		"time=2026-10-22T11:00:00Z level=INFO msg=\"starting llama-server\" cmd=\"/x/llama-server --model /u/blobs/sha256-" HEX_A "\"",
		"time=2026-10-22T11:00:01Z level=INFO msg=\"loading model via llama-server\" model=/u/blobs/sha256-" HEX_A,
	};
	oa_history h;
	read_lines(&h, lines, sizeof lines / sizeof lines[0]);
	CHECK_U64(h.n, 2);
	CHECK_U64(h.v[1].line, 4);
	oa_history_free(&h);
}

/* Memory figures from long before a start (a server start, a load with no
 * start line) are not that load's. */
static void test_stale_memory(void)
{
	static const char *const lines[] = {
		"time=2026-10-22T08:00:00Z level=INFO msg=\"system memory\" total=\"32.0 GiB\" free=\"30.0 GiB\"",
		"time=2026-10-22T09:00:00Z level=INFO msg=\"starting mlx runner subprocess\" model=a:b",
		"time=2026-10-22T09:59:59Z level=INFO msg=\"system memory\" total=\"32.0 GiB\" free=\"20.0 GiB\"",
		"time=2026-10-22T10:00:00Z level=INFO msg=\"mlx runner is ready\"",
		"time=2026-10-22T10:05:00Z level=INFO msg=\"system memory\" total=\"32.0 GiB\" free=\"10.0 GiB\"",
		"time=2026-10-22T10:05:01Z level=INFO msg=\"starting mlx runner subprocess\" model=c:d",
	};
	oa_history h;
	read_lines(&h, lines, sizeof lines / sizeof lines[0]);
	CHECK_U64(h.n, 2);
	CHECK_U64(h.v[0].mem_sys_free, 20ULL << 30); /* logged while it was open */
	CHECK_U64(h.v[1].mem_sys_free, 10ULL << 30); /* a second before it */
	oa_history_free(&h);
}

/* Does the line name the store? */
static bool named(oa_store_names *sn, const char *line)
{
	return oa_store_named_in(sn, line, strlen(line));
}

/* How a log names the store it served, where the paths exist nowhere: by
 * text, normalised; a mounted machine's logs name it without the mount
 * point. */
static void test_serves_text(void)
{
	oa_store_names sn;
	oa_store_names_init(&sn, "/nonexistent-oa/m", NULL);
	CHECK(named(&sn, "cmd=\"/usr/bin/ollama runner --model /nonexistent-oa/m/blobs/sha256-ab --port 1\""));
	CHECK(named(&sn, "env=\"map[OLLAMA_HOST:x OLLAMA_MODELS:/nonexistent-oa/m OLLAMA_NOPRUNE:false]\""));
	CHECK(named(&sn, "env=\"map[OLLAMA_MODELS:/nonexistent-oa/m]\""));
	CHECK(named(&sn, "model=/nonexistent-oa//m/./blobs/sha256-ab"));       /* the same path, spelled so */
	CHECK(named(&sn, "env=\"map[OLLAMA_MODELS:/nonexistent-oa/m/ OLLAMA_X:1]\""));
	CHECK(named(&sn, "model=\"/a b/blobs/sha256-x /nonexistent-oa/m/blobs/sha256-ab\""));
	CHECK(!named(&sn, "model=/nonexistent-oa/m2/blobs/sha256-ab"));
	CHECK(!named(&sn, "model=/x/nonexistent-oa/m/blobs/sha256-ab"));      /* a longer path is another */
	CHECK(!named(&sn, "env=\"map[OLLAMA_MODELS:/nonexistent-oa/m2]\""));
	CHECK(!named(&sn, "nonexistent-oa/m/blobs/sha256-ab OLLAMA_MODELS:"));
	CHECK(named(&sn, "cmd=\"x --model /nonexistent-oa/m/blobs/sha256-ab\"")); /* asked again: the memo */
	oa_store_names_free(&sn);
	oa_store_names_init(&sn, "/nonexistent-oa/root/usr/share/ollama/.ollama/models", "/nonexistent-oa/root/");
	CHECK(named(&sn, "--model /usr/share/ollama/.ollama/models/blobs/sha256-ab --port"));
	CHECK(named(&sn, "map[OLLAMA_MODELS:/usr/share/ollama/.ollama/models]"));
	CHECK(named(&sn, "--model /nonexistent-oa/root/usr/share/ollama/.ollama/models/blobs/sha256-ab"));
	oa_store_names_free(&sn);
	oa_store_names_init(&sn, "/nonexistent-oa/rootless/m", "/nonexistent-oa/root");
	CHECK(named(&sn, "model=/nonexistent-oa/rootless/m/blobs/sha256-ab")); /* not under the root: as given */
	CHECK(!named(&sn, "model=/m/blobs/sha256-ab"));
	oa_store_names_free(&sn);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* d/NAME -> target */
static void link_at(const char *d, const char *name, const char *target)
{
	char *p = oa_xasprintf("%s/%s", d, name);
	CHECK(symlink(target, p) == 0);
	free(p);
}

/* "<d><path>/blobs/sha256-ab" as a load line names it. */
static bool names_path(oa_store_names *sn, const char *d, const char *path)
{
	char *line = oa_xasprintf("cmd=\"ollama runner --model %s%s/blobs/sha256-ab --port 1\"", d, path);
	bool yes = named(sn, line);
	free(line);
	return yes;
}

/* The same store under another name: a symlinked parent, relative or
 * absolute, resolved on this machine or inside a mounted one. */
static void test_serves_resolved(void)
{
	char d[] = "/tmp/oa-unit-serves-XXXXXX";
	CHECK(mkdtemp(d) != NULL);
	char *data = oa_xasprintf("%s/data", d), *store = oa_xasprintf("%s/data/models", d);
	CHECK(mkdir(data, 0700) == 0 && mkdir(store, 0700) == 0);
	link_at(d, "srv", "data");      /* relative */
	link_at(d, "abs", "/data");     /* absolute: that machine's /data */
	link_at(d, "loop", "loop");
	char name[32], target[32];
	for (int i = 0; i < 41; i++) {  /* hop0 -> hop1 -> ... -> hop40 -> data: 41 links */
		snprintf(name, sizeof name, "hop%d", i);
		snprintf(target, sizeof target, i == 40 ? "data" : "hop%d", i + 1);
		link_at(d, name, target);
	}
	oa_store_names sn;
	oa_store_names_init(&sn, store, NULL);
	CHECK(names_path(&sn, d, "/srv/models"));
	CHECK(names_path(&sn, d, "/srv/../data/models"));
	CHECK(!names_path(&sn, d, "/abs/models"));      /* this machine's /data: not there */
	CHECK(!names_path(&sn, d, "/data"));
	oa_store_names_free(&sn);
	oa_store_names_init(&sn, store, d);            /* the logs of the machine mounted at d */
	CHECK(names_path(&sn, "", "/srv/models"));
	CHECK(names_path(&sn, "", "/abs/models"));
	CHECK(names_path(&sn, "", "/../../abs/./models/")); /* ".." never above its root */
	CHECK(names_path(&sn, "", "/hop1/models"));          /* 40 links: the kernel's limit */
	CHECK(!names_path(&sn, "", "/hop0/models"));         /* 41: ELOOP, and no text matches */
	CHECK(!names_path(&sn, "", "/loop/models"));
	CHECK(names_path(&sn, d, "/data/models"));           /* this machine's path: as text */
	oa_store_names_free(&sn);
	struct stat st, want;
	CHECK(stat(store, &want) == 0);
	CHECK(oa_dir_stat_in_root(d, "/abs/models", &st) == 0 && st.st_ino == want.st_ino);
	errno = 0;
	CHECK(oa_dir_stat_in_root(d, "/hop0/models", &st) < 0 && errno == ELOOP);
	CHECK(oa_dir_stat_in_root(d, "/loop", &st) < 0 && errno == ELOOP);
	CHECK(oa_dir_stat_in_root(d, "/hop40", &st) == 0 && S_ISDIR(st.st_mode)); /* one link */
	char *plain = oa_xasprintf("%s/plain", d);
	FILE *f = fopen(plain, "w");
	CHECK(f && fclose(f) == 0);
	CHECK(oa_dir_stat_in_root(d, "/plain", &st) < 0 && errno == ENOTDIR);
	free(plain);
	nftw(d, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(store);
	free(data);
}

int main(void)
{
	test_serves_text();
	test_serves_resolved();
	test_time();
	test_size_digest();
	test_eras();
	test_garbage();
	test_fold();
	test_repeat_without_result();
	test_stale_memory();
	TEST_MAIN_END();
}
