/* trash.c - a quarantine as a trash: its operations (one per apply into
 * it) and emptying it for good (trash.h, docs/disk-space.md). */
#include "ollama_audit/trash.h"
#include "ollama_audit/humanize.h"
#include "base/jsonutil.h"
#include "base/platform.h"
#include "base/util.h"
#include "space/quarantine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool state_is(json_t *x, const char *want)
{
	const char *state = json_string_value(json_object_get(x, "state"));
	return state && strcmp(state, want) == 0;
}

/* ---- listing ---------------------------------------------------------------------- */

static const char *str_or_empty(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
}

static void op_fill(oa_quarantine_op *op, json_t *j)
{
	snprintf(op->id, sizeof op->id, "%s", json_string_value(json_object_get(j, "id")));
	snprintf(op->time, sizeof op->time, "%s", str_or_empty(j, "time"));
	snprintf(op->command, sizeof op->command, "%s", str_or_empty(j, "command"));
	snprintf(op->child, sizeof op->child, "%s", str_or_empty(j, "child"));
	oa_json_get_i64(j, "unix_time", &op->unix_time);
	uint64_t v = 0;
	if (oa_json_get_u64(j, "planned_entries", &v))
		op->planned_entries = (size_t)v;
	oa_json_get_u64(j, "planned_bytes", &op->planned_bytes);
	json_t *models = json_object_get(j, "models");
	op->models = oa_xcalloc(json_array_size(models) + 1, sizeof *op->models);
	for (size_t i = 0; i < json_array_size(models); i++)
		if (json_string_value(json_array_get(models, i)))
			op->models[op->n_models++] = oa_xstrdup(json_string_value(json_array_get(models, i)));
}

/* The model of a manifest x holds, once per operation. */
static void op_model_held(oa_quarantine_op *op, json_t *x)
{
	const char *model = json_string_value(json_object_get(x, "model"));
	const char *category = json_string_value(json_object_get(x, "category"));
	if (!model || !category || (strcmp(category, "manifest") && strcmp(category, "list-rewrite")))
		return;
	for (size_t m = 0; m < op->n_models_held; m++)
		if (strcmp(op->models_held[m], model) == 0)
			return;
	op->models_held = oa_xreallocarray(op->models_held, op->n_models_held + 1, sizeof *op->models_held);
	op->models_held[op->n_models_held++] = oa_xstrdup(model);
}

/* An entry's share in its operation's figures: the files it moved into DIR
 * and DIR still has, not what it planned (an empty directory it removed is
 * not in DIR: restore makes it again). */
static void op_count(oa_quarantine_op *op, int files_fd, json_t *x)
{
	bool held = quarantine_entry_held(files_fd, x), restored = state_is(x, "restored"),
	     deleted = state_is(x, "deleted");
	if (json_is_true(json_object_get(x, "empty_dir")) || (!held && !restored && !deleted))
		return; /* an empty directory; skipped, failed or killed before it moved */
	uint64_t b = 0;
	oa_json_get_u64(x, "disk_bytes", &b);
	op->entries++;
	op->disk_bytes += b;
	if (held) {
		op->held++;
		op->held_bytes += b;
		op_model_held(op, x);
	}
	op->restored += restored;
	op->deleted += deleted;
}

static const char *op_state(const oa_quarantine_op *op)
{
	if (!op->entries)
		return "nothing";
	if (op->held == op->entries)
		return "held";
	if (op->held == 0 && op->deleted == 0)
		return "restored";
	if (op->held == 0 && op->restored == 0)
		return "deleted";
	return "partial";
}

int oa_quarantine_ops_read(const char *dir, oa_quarantine_ops *ops, char *err, size_t errlen)
{
	memset(ops, 0, sizeof *ops);
	int files_fd;
	json_t *index = quarantine_peek_index(dir, &files_fd, err, errlen);
	if (!index)
		return -1;
	ops->store = oa_xstrdup(str_or_empty(index, "store"));
	ops->schema = oa_xstrdup(str_or_empty(index, "schema"));
	json_t *list = json_object_get(index, "operations"), *entries = json_object_get(index, "entries"), *x;
	ops->v = oa_xcalloc(json_array_size(list) + 1, sizeof *ops->v);
	size_t i;
	json_array_foreach(list, i, x)
		if (json_string_value(json_object_get(x, "id")))
			op_fill(&ops->v[ops->n++], x);
	json_array_foreach(entries, i, x)
		for (size_t k = 0; k < ops->n; k++)
			if (strcmp(ops->v[k].id, quarantine_entry_op(x)) == 0)
				op_count(&ops->v[k], files_fd, x);
	for (size_t k = 0; k < ops->n; k++)
		ops->v[k].state = op_state(&ops->v[k]);
	quarantine_held(files_fd, entries, &ops->held_entries, &ops->held_bytes);
	if (files_fd >= 0)
		close(files_fd);
	json_decref(index);
	return 0;
}

void oa_quarantine_ops_free(oa_quarantine_ops *ops)
{
	for (size_t k = 0; k < ops->n; k++) {
		for (size_t m = 0; m < ops->v[k].n_models; m++)
			free(ops->v[k].models[m]);
		free(ops->v[k].models);
		for (size_t m = 0; m < ops->v[k].n_models_held; m++)
			free(ops->v[k].models_held[m]);
		free(ops->v[k].models_held);
	}
	free(ops->v);
	free(ops->store);
	free(ops->schema);
	memset(ops, 0, sizeof *ops);
}

/* ---- emptying --------------------------------------------------------------------- */

/* Delete name in dfd (a file, a symlink as a link, a directory with what is
 * in it, never across a symlink or a mount point: EXDEV, the rest goes), or
 * only measure it when !apply. *freed gets the allocated bytes of every file
 * that goes (or would go) with its last link: what the filesystem gets
 * back. 0, or -1 with errno. */
static int delete_tree(int dfd, const char *name, bool apply, int depth, uint64_t *freed)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		if (apply && unlinkat(dfd, name, 0) < 0)
			return -1;
		if (st.st_nlink == 1)
			*freed += (uint64_t)st.st_blocks * 512u;
		return 0;
	}
	if (depth > 32) {
		errno = ELOOP;
		return -1;
	}
	/* what is mounted there is not the quarantine's: it stays, and so
	 * does the directory it is mounted on (a dry run counts the rest) */
	if (oa_is_mount_point(dfd, name, &st)) {
		errno = EXDEV;
		return apply ? -1 : 0;
	}
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int rc = 0, e = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (delete_tree(fd, de->d_name, apply, depth + 1, freed) < 0 && !e) {
			rc = -1;
			e = errno;
		}
	}
	closedir(d);
	if (rc == 0 && apply && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		return -1;
	if (rc == 0)
		*freed += (uint64_t)st.st_blocks * 512u;
	errno = e;
	return rc;
}

/* The operations at least older_than old (all when 0), as an id set. */
static json_t *old_enough(json_t *index, const oa_empty_opts *o)
{
	json_t *set = json_object(), *op;
	size_t i;
	json_array_foreach(json_object_get(index, "operations"), i, op) {
		int64_t when = 0;
		const char *id = json_string_value(json_object_get(op, "id"));
		oa_json_get_i64(op, "unix_time", &when);
		if (id && (o->older_than <= 0 || (double)when <= o->now - o->older_than))
			json_object_set_new(set, id, json_true());
	}
	return set;
}

/* One entry of a chosen operation: its file deleted (or measured). */
static void empty_entry(int files_fd, json_t *x, const oa_empty_opts *o, oa_empty_result *r, bool *touched)
{
	const char *stored = json_string_value(json_object_get(x, "stored"));
	const char *path = json_string_value(json_object_get(x, "path"));
	if (state_is(x, "removed-dir")) {
		/* an empty directory of the store: nothing of it is in DIR */
		if (o->apply)
			json_object_set_new(x, "state", json_string("deleted"));
		return;
	}
	bool moved = state_is(x, "moved");
	const char *name = quarantine_stored_name(x);
	if (!quarantine_entry_held(files_fd, x) || !name)
		return;
	struct stat st;
	if (fstatat(files_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (moved && o->apply) /* gone already: nothing left to restore */
			json_object_set_new(x, "state", json_string("deleted"));
		return;
	}
	uint64_t freed = 0;
	char *ep = oa_escape(path ? path : stored, strlen(path ? path : stored));
	if (delete_tree(files_fd, name, o->apply, 0, &freed) < 0) {
		r->failed++;
		if (o->log)
			fprintf(o->log, "FAILED %s (%s): %s\n", ep, stored,
			        errno == EXDEV ? OA_MOUNT_POINT_KEPT : strerror(errno));
	} else {
		r->entries++;
		r->bytes += freed;
		*touched = true;
		if (o->apply)
			json_object_set_new(x, "state", json_string("deleted"));
		if (o->log) {
			char b[48];
			oa_human_bytes((int64_t)freed, b, sizeof b);
			fprintf(o->log, "%s %s (%s, %s)\n", o->apply ? "deleted" : "would delete", ep, stored, b);
		}
	}
	free(ep);
}

static int empty_open(const char *dir, const oa_empty_opts *o, oa_empty_result *r, int *qfd, int *files_fd,
                      char *err, size_t errlen)
{
	*files_fd = -1;
	*qfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*qfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (quarantine_check_private(*qfd, dir, "", err, errlen) < 0)
		return -1;
	/* as an apply or a restore takes it: nobody moves in or out meanwhile */
	int locked = o->apply ? apply_lock(*qfd, dir, o->no_lock, err, errlen) : 0;
	if (locked < 0)
		return -1;
	r->unlocked = locked > 0;
	*files_fd = openat(*qfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*files_fd < 0) {
		snprintf(err, errlen, "cannot open %s/files: %s", dir, strerror(errno));
		return -1;
	}
	return quarantine_check_private(*files_fd, dir, "/files", err, errlen);
}

int oa_quarantine_empty(const char *dir, const oa_empty_opts *o, oa_empty_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	int qfd, files_fd;
	json_t *index = NULL;
	int rc = empty_open(dir, o, r, &qfd, &files_fd, err, errlen);
	bool exists = true;
	if (rc == 0 && !(index = quarantine_load_index(qfd, dir, err, errlen, &exists))) {
		if (!exists)
			snprintf(err, errlen, "%s has no index.json: not a quarantine directory", dir);
		rc = -1;
	}
	if (rc == 0) {
		json_t *chosen = old_enough(index, o), *x, *entries = json_object_get(index, "entries");
		json_t *touched_ops = json_object();
		size_t i;
		json_array_foreach(entries, i, x) {
			bool touched = false;
			if (json_object_get(chosen, quarantine_entry_op(x)))
				empty_entry(files_fd, x, o, r, &touched);
			if (touched)
				json_object_set_new(touched_ops, quarantine_entry_op(x), json_true());
		}
		r->operations = json_object_size(touched_ops);
		json_decref(touched_ops);
		quarantine_held(files_fd, entries, &r->held_entries, &r->held_bytes);
		if (!o->apply) {
			/* what would stay: the moved entries of the operations not chosen */
			r->held_entries = 0;
			r->held_bytes = 0;
			json_array_foreach(entries, i, x) {
				uint64_t b = 0;
				if (!quarantine_entry_held(files_fd, x) || json_object_get(chosen, quarantine_entry_op(x)))
					continue;
				r->held_entries++;
				if (oa_json_get_u64(x, "disk_bytes", &b))
					r->held_bytes += b;
			}
		}
		json_decref(chosen);
		if (o->apply)
			rc = quarantine_compact(qfd, dir, index, err, errlen);
	}
	if (files_fd >= 0)
		close(files_fd);
	if (qfd >= 0)
		close(qfd); /* and the lock goes */
	json_decref(index);
	return rc;
}
