/* restore_select.c - what a restore puts back: the entries of the
 * operations chosen, or one model's; and the blobs among them that a
 * manifest the quarantine keeps holding needs (restore_select.h). */
#include "space/restore_select.h"
#include "ollama_audit/digest.h"
#include "ollama_audit/manifest.h"
#include "ollama_audit/name.h"
#include "base/jsonutil.h"
#include "base/platform.h"
#include "base/util.h"
#include "space/plan_path.h"
#include "space/quarantine.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *str_of(json_t *x, const char *key)
{
	return json_string_value(json_object_get(x, key));
}

bool restore_entry_is_manifest(json_t *x)
{
	return plan_path_kind(str_of(x, "command"), str_of(x, "path"), plan_type_char(str_of(x, "type"))) ==
	       PK_MANIFEST;
}

/* The digest of an entry that is a whole blob, blobs/sha256[-:]<64 hex>. */
static bool blob_entry_hex(json_t *x, oa_digest_hex hex)
{
	const char *path = str_of(x, "path");
	char type = plan_type_char(str_of(x, "type"));
	if (!path || (type != 'f' && type != 'l') || strlen(path) != strlen("blobs/sha256-") + 64)
		return false;
	plan_path_hex(path, hex);
	return hex[0] != '\0';
}

static void pick_init(restore_pick *p, json_t *entries)
{
	memset(p, 0, sizeof *p);
	p->n = json_array_size(entries);
	p->take = oa_xcalloc(p->n + 1, sizeof *p->take);
	p->keep = oa_xcalloc(p->n + 1, sizeof *p->keep);
	p->keep_op = oa_xcalloc(p->n + 1, sizeof *p->keep_op);
	p->ops = json_object();
}

/* Operation op is one the restore takes from; the first one named is the
 * newest (operations and entries are looked at newest first). */
static void pick_op(restore_pick *p, const char *op)
{
	if (!json_object_size(p->ops))
		snprintf(p->newest, sizeof p->newest, "%s", op);
	json_object_set_new(p->ops, op, json_true());
}

void restore_pick_free(restore_pick *p)
{
	for (size_t k = 0; k < p->n; k++)
		free(p->keep_op[k]);
	free(p->take);
	free(p->keep);
	free(p->keep_op);
	json_decref(p->ops);
	memset(p, 0, sizeof *p);
}

/* ---- what a manifest reaches ------------------------------------------------------ */

/* dfd/name when it is a regular file (never through a symlink) of at most
 * OA_MANIFEST_MAX bytes that starts like JSON: a manifest or a list, not
 * weights. NULL otherwise. */
static uint8_t *read_json_like(int dfd, const char *name, size_t *len)
{
	if (dfd < 0 || !name)
		return NULL;
	int fd = oa_openat_ro(dfd, name, O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	char head[64];
	ssize_t got = -1;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= OA_MANIFEST_MAX)
		got = oa_pread_full(fd, head, sizeof head, 0);
	ssize_t i = 0;
	while (i < got && isspace((unsigned char)head[i]))
		i++;
	uint8_t *bytes = NULL;
	if (i < got && head[i] == '{' && oa_read_regular_at(dfd, name, OA_MANIFEST_MAX, &bytes, len) < 0)
		bytes = NULL;
	if (fd >= 0)
		close(fd);
	return bytes;
}

/* The digests found so far, and those still to read. */
typedef struct reach {
	json_t *seen;   /* hex -> true */
	json_t *queue;  /* hex strings not read yet */
} reach;

static void reach_add(void *ctx, const oa_digest_hex hex)
{
	reach *r = ctx;
	char low[OA_DIGEST_HEX_LEN + 1];
	for (int k = 0; k < OA_DIGEST_HEX_LEN; k++)
		low[k] = (char)tolower((unsigned char)hex[k]);
	low[OA_DIGEST_HEX_LEN] = '\0';
	if (json_object_get(r->seen, low))
		return;
	json_object_set_new(r->seen, low, json_true());
	json_array_append_new(r->queue, json_string(low));
}

/* What bytes name, and the bytes themselves as a blob (a tag that is a
 * copy or a hard link of a manifest blob). */
static void reach_bytes(reach *r, const uint8_t *bytes, size_t len)
{
	oa_digest_hex self;
	oa_sha256_hex(bytes, len, self);
	reach_add(r, self);
	oa_digest_scan(bytes, len, reach_add, r);
}

/* "hex" -> index of the newest entry DIR holds of blobs/sha256-<hex>. */
static json_t *blob_index(int files_fd, json_t *entries)
{
	json_t *at = json_object();
	for (size_t k = json_array_size(entries); k-- > 0;) {
		json_t *x = json_array_get(entries, k);
		oa_digest_hex hex;
		if (blob_entry_hex(x, hex) && quarantine_entry_held(files_fd, x) && !json_object_get(at, hex))
			json_object_set_new(at, hex, json_integer((json_int_t)k));
	}
	return at;
}

/* A blob's bytes when it is a manifest: from DIR when an entry holds it
 * there, else from the store. */
static uint8_t *blob_bytes(const restore_source *src, json_t *entries, json_t *at, const char *hex, size_t *len)
{
	json_t *k = json_object_get(at, hex);
	uint8_t *bytes = k ? read_json_like(src->files_fd, quarantine_stored_name(json_array_get(entries,
	                                    (size_t)json_integer_value(k))), len) : NULL;
	if (!bytes) {
		char name[80];
		snprintf(name, sizeof name, "sha256-%s", hex);
		bytes = read_json_like(src->blobs_fd, name, len);
	}
	return bytes;
}

/* The text of the symlink entry x is: its copy in DIR, else its path in the
 * store (a restore killed after putting it back). */
static bool link_text(const restore_source *src, json_t *x, char *buf, size_t size)
{
	const char *name = quarantine_stored_name(x), *leaf;
	ssize_t n = name ? readlinkat(src->files_fd, name, buf, size - 1) : -1;
	int pfd = n < 0 ? plan_open_parent_at(src->root_fd, str_of(x, "path"), &leaf) : -1;
	if (pfd >= 0) {
		n = readlinkat(pfd, leaf, buf, size - 1);
		close(pfd);
	}
	buf[n > 0 ? n : 0] = '\0';
	return n > 0;
}

/* The first bytes of manifest entry x: its copy in DIR, else its path. */
static void reach_entry(const restore_source *src, reach *r, json_t *x)
{
	if (plan_type_char(str_of(x, "type")) == 'l') {
		char target[OA_PATH_MAX];
		if (!link_text(src, x, target, sizeof target))
			return;
		const char *base = strrchr(target, '/');
		base = base ? base + 1 : target;
		if (strlen(base) == strlen("sha256-") + 64 && (base[6] == '-' || base[6] == ':') &&
		    strncmp(base, "sha256", 6) == 0 && oa_is_hex(base + 7, 64))
			reach_add(r, base + 7);
		return;
	}
	size_t len;
	const char *name = quarantine_stored_name(x), *leaf;
	struct stat st;
	uint8_t *bytes = NULL;
	if (name && fstatat(src->files_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		bytes = read_json_like(src->files_fd, name, &len);
	} else {
		int pfd = plan_open_parent_at(src->root_fd, str_of(x, "path"), &leaf);
		bytes = pfd >= 0 ? read_json_like(pfd, leaf, &len) : NULL;
		if (pfd >= 0)
			close(pfd);
	}
	if (bytes)
		reach_bytes(r, bytes, len);
	free(bytes);
}

/* Every digest manifest entry x reaches, in seen (hex -> true): what it
 * names, and what the manifests among those name (a list's children and
 * theirs), each read once. */
static void entry_reach(const restore_source *src, json_t *entries, json_t *at, json_t *x, json_t *seen)
{
	reach r = { .seen = seen, .queue = json_array() };
	reach_entry(src, &r, x);
	for (size_t q = 0; q < json_array_size(r.queue); q++) {
		size_t len;
		uint8_t *bytes = blob_bytes(src, entries, at, json_string_value(json_array_get(r.queue, q)), &len);
		if (bytes)
			reach_bytes(&r, bytes, len);
		free(bytes);
	}
	json_decref(r.queue);
}

/* ---- the operations chosen ---------------------------------------------------------- */

/* Whether operation id has anything to put back: a file DIR holds, or an
 * empty directory it removed. An apply killed before it moved anything
 * has neither. */
static bool op_holds(const restore_source *src, json_t *entries, const char *id)
{
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		const char *state = str_of(x, "state");
		if (strcmp(quarantine_entry_op(x), id) == 0 &&
		    (quarantine_entry_held(src->files_fd, x) || (state && strcmp(state, "removed-dir") == 0)))
			return true;
	}
	return false;
}

int restore_pick_ops(const restore_source *src, json_t *index, bool last, const char *op, restore_pick *p,
                     char *err, size_t errlen)
{
	json_t *ops = json_object_get(index, "operations"), *entries = json_object_get(index, "entries");
	pick_init(p, entries);
	for (size_t k = json_array_size(ops); k-- > 0;) {
		const char *id = str_of(json_array_get(ops, k), "id");
		if (!id || (op && strcmp(op, id) != 0) || (last && !op_holds(src, entries, id)))
			continue;
		pick_op(p, id);
		if (last)
			break;
	}
	if (!json_object_size(p->ops)) {
		if (op)
			snprintf(err, errlen, "no operation %s in this quarantine (`restore DIR` lists them)", op);
		else
			snprintf(err, errlen, "nothing to restore: no operation in this quarantine holds entries");
		return -1;
	}
	for (size_t k = 0; k < p->n; k++)
		p->take[k] = json_object_get(p->ops, quarantine_entry_op(json_array_get(entries, k))) != NULL;
	return 0;
}

/* ---- one model -------------------------------------------------------------------- */

static void add_unique(json_t *names, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(names, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return;
	json_array_append_new(names, json_string(name));
}

/* Whether the names (as recorded) are all one model, by exact comparison. */
static bool one_model(json_t *names)
{
	oa_name a, b;
	const char *first = json_string_value(json_array_get(names, 0));
	for (size_t i = 1; i < json_array_size(names); i++) {
		const char *other = json_string_value(json_array_get(names, i));
		if (!oa_name_parse(first, &a) || !oa_name_parse(other, &b) || !oa_name_equal(&a, &b))
			return false;
	}
	return true;
}

/* The names recorded on manifest entries that `typed` names as rm takes
 * it: those equal to it case included; else, when every name it matches
 * only case-insensitively is one model, those. NULL with err otherwise
 * (*ambiguous when it matches several). */
static json_t *model_names(json_t *entries, const char *typed, bool *ambiguous, char *err, size_t errlen)
{
	oa_name want, got;
	bool parsed = oa_name_parse_ref(typed, &want, NULL);
	json_t *exact = json_array(), *fold = json_array(), *x;
	size_t i;
	json_array_foreach(entries, i, x) {
		const char *m = str_of(x, "model");
		if (!m || !restore_entry_is_manifest(x))
			continue;
		bool ok = parsed && oa_name_parse(m, &got);
		if (strcmp(m, typed) == 0 || (ok && oa_name_equal(&got, &want)))
			add_unique(exact, m);
		else if (ok && oa_name_equal_fold(&got, &want))
			add_unique(fold, m);
	}
	*ambiguous = !json_array_size(exact) && json_array_size(fold) > 1 && !one_model(fold);
	json_t *out = json_array_size(exact) ? exact : json_array_size(fold) && !*ambiguous ? fold : NULL;
	if (!out && *ambiguous) {
		oa_buf b;
		oa_buf_init(&b);
		json_array_foreach(fold, i, x)
			oa_buf_printf(&b, "%s%s", i ? ", " : "", json_string_value(x));
		snprintf(err, errlen, "ambiguous: %s matches %s in this quarantine; name one in its exact case", typed,
		         b.data);
		oa_buf_free(&b);
	} else if (!out) {
		snprintf(err, errlen, "no operation in this quarantine removed the manifest of %s (`restore DIR` lists "
		         "them)", typed);
	}
	json_incref(out);
	json_decref(exact);
	json_decref(fold);
	return out;
}

static bool names_have(json_t *names, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(names, i, v)
		if (name && strcmp(json_string_value(v), name) == 0)
			return true;
	return false;
}

/* The manifests of the model DIR holds, newest first, one per path, and
 * what they reach into seen. The number taken. */
static size_t take_manifests(const restore_source *src, json_t *entries, json_t *at, json_t *names,
                             restore_pick *p, json_t *paths, json_t *seen)
{
	size_t n = 0;
	for (size_t k = p->n; k-- > 0;) {
		json_t *x = json_array_get(entries, k);
		const char *path = str_of(x, "path");
		if (!path || !restore_entry_is_manifest(x) || !names_have(names, str_of(x, "model")) ||
		    !quarantine_entry_held(src->files_fd, x) || json_object_get(paths, path))
			continue;
		json_object_set_new(paths, path, json_true());
		p->take[k] = true;
		pick_op(p, quarantine_entry_op(x));
		entry_reach(src, entries, at, x, seen);
		n++;
	}
	return n;
}

/* The empty directories removed above those manifests (restore makes them
 * again), newest first, one per path. */
static void take_dirs(json_t *entries, json_t *paths, restore_pick *p)
{
	json_t *done = json_object();
	for (size_t k = p->n; k-- > 0;) {
		json_t *x = json_array_get(entries, k);
		const char *state = str_of(x, "state"), *dir = str_of(x, "path"), *path;
		if (!state || strcmp(state, "removed-dir") || !dir || json_object_get(done, dir))
			continue;
		size_t len = strlen(dir);
		json_t *v;
		json_object_foreach(paths, path, v) {
			if (strncmp(path, dir, len) == 0 && path[len] == '/') {
				json_object_set_new(done, dir, json_true());
				p->take[k] = true;
				break;
			}
		}
	}
	json_decref(done);
}

/* Whether the store has the blob with its own file, another than DIR's. */
static bool store_has_other(const restore_source *src, json_t *x)
{
	char name[80];
	oa_digest_hex hex;
	struct stat home, held;
	const char *stored = quarantine_stored_name(x);
	if (!blob_entry_hex(x, hex) || src->blobs_fd < 0)
		return false;
	snprintf(name, sizeof name, "%s", str_of(x, "path") + strlen("blobs/"));
	return fstatat(src->blobs_fd, name, &home, AT_SYMLINK_NOFOLLOW) == 0 && stored &&
	       fstatat(src->files_fd, stored, &held, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (home.st_dev != held.st_dev || home.st_ino != held.st_ino);
}

int restore_pick_model(const restore_source *src, json_t *index, const char *model, restore_pick *p, char *err,
                       size_t errlen)
{
	json_t *entries = json_object_get(index, "entries");
	pick_init(p, entries);
	bool ambiguous = false;
	json_t *names = model_names(entries, model, &ambiguous, err, errlen);
	if (!names)
		return ambiguous ? RESTORE_PICK_AMBIGUOUS : -1;
	snprintf(p->model, sizeof p->model, "%s", json_string_value(json_array_get(names, 0)));
	json_t *at = blob_index(src->files_fd, entries), *paths = json_object(), *seen = json_object();
	int rc = 0;
	if (!take_manifests(src, entries, at, names, p, paths, seen)) {
		snprintf(err, errlen, "%s: this quarantine no longer holds its manifest (restored or deleted); "
		         "`restore DIR` lists what it holds", p->model);
		rc = -1;
	} else {
		take_dirs(entries, paths, p);
		const char *hex;
		json_t *k;
		/* the blobs they reach that DIR holds (of whichever operation)
		 * and the store has not another file of */
		json_object_foreach(seen, hex, k) {
			json_t *idx = json_object_get(at, hex);
			json_t *x = idx ? json_array_get(entries, (size_t)json_integer_value(idx)) : NULL;
			if (x && !store_has_other(src, x))
				p->take[json_integer_value(idx)] = true;
		}
	}
	json_decref(names);
	json_decref(at);
	json_decref(paths);
	json_decref(seen);
	return rc;
}

/* ---- what stays in DIR for another model -------------------------------------------- */

void restore_pick_keep(const restore_source *src, json_t *entries, restore_pick *p)
{
	json_t *at = blob_index(src->files_fd, entries), *needed = json_object();
	/* hex -> the operations (newest first) of the manifests DIR keeps
	 * holding that reach it */
	for (size_t k = p->n; k-- > 0;) {
		json_t *x = json_array_get(entries, k);
		if (p->take[k] || !restore_entry_is_manifest(x) || !quarantine_entry_held(src->files_fd, x))
			continue;
		json_t *seen = json_object();
		const char *hex;
		json_t *v;
		entry_reach(src, entries, at, x, seen);
		json_object_foreach(seen, hex, v) {
			json_t *ops = json_object_get(needed, hex);
			if (!ops)
				json_object_set_new(needed, hex, ops = json_array());
			add_unique(ops, quarantine_entry_op(x));
		}
		json_decref(seen);
	}
	for (size_t k = 0; k < p->n; k++) {
		json_t *x = json_array_get(entries, k), *ops;
		oa_digest_hex hex;
		if (!p->take[k] || !blob_entry_hex(x, hex) || !(ops = json_object_get(needed, hex)))
			continue;
		p->keep[k] = true;
		if (!names_have(ops, quarantine_entry_op(x)))
			p->keep_op[k] = oa_xstrdup(json_string_value(json_array_get(ops, 0)));
	}
	json_decref(at);
	json_decref(needed);
}

void restore_pick_hand_over(json_t *entries, const restore_pick *p)
{
	for (size_t k = 0; k < p->n; k++)
		if (p->keep_op[k])
			json_object_set_new(json_array_get(entries, k), "op", json_string(p->keep_op[k]));
}

void restore_pick_rest(const restore_source *src, json_t *entries, const restore_pick *p, restore_rest *r)
{
	json_t *models = json_array(), *x;
	size_t i;
	json_array_foreach(entries, i, x) {
		uint64_t b = 0;
		if (!json_object_get(p->ops, quarantine_entry_op(x)) || !quarantine_entry_held(src->files_fd, x))
			continue;
		r->entries++;
		if (oa_json_get_u64(x, "disk_bytes", &b))
			r->bytes += b;
		if (restore_entry_is_manifest(x) && str_of(x, "model"))
			add_unique(models, str_of(x, "model"));
	}
	r->models = json_array_size(models);
	oa_buf b;
	oa_buf_init(&b);
	json_array_foreach(models, i, x)
		oa_buf_printf(&b, "%s%s", i ? ", " : "", json_string_value(x));
	if (b.len >= r->names_len)
		snprintf(r->names, r->names_len, "%.*s...", (int)r->names_len - 4, b.data);
	else
		snprintf(r->names, r->names_len, "%s", b.len ? b.data : "");
	oa_buf_free(&b);
	json_decref(models);
}
