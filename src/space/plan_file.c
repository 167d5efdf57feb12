/* plan_file.c - a plan as JSON (prune.h: oa_plan_to_json), written to and
 * read back from --plan FILE; what is read back is trusted from each
 * entry's path alone (plan_path.c). */
#include "ollama_audit/plan_file.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/humanize.h"
#include "base/platform.h"
#include "base/util.h"
#include "base/jsonutil.h"
#include "space/plan_file_private.h"
#include "space/plan_path.h"
#include "space/prune_private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

json_t *plan_entry_json(const oa_plan_entry *e)
{
	char mt[48];
	oa_iso8601((time_t)(e->mtime_ns / 1000000000), (long)(e->mtime_ns % 1000000000), mt, sizeof mt);
	json_t *o = json_object();
	json_object_set_new(o, "path", json_string(e->path));
	json_object_set_new(o, "category", json_string(e->category));
	json_object_set_new(o, "digest", e->hex[0] ? json_sprintf("sha256:%s", e->hex) : json_null());
	json_object_set_new(o, "type", json_string(plan_type_name(e->type)));
	json_object_set_new(o, "empty_dir", json_boolean(e->empty_dir));
	json_object_set_new(o, "check_refs", json_boolean(e->check_refs));
	json_object_set_new(o, "dev", json_integer((json_int_t)e->dev));
	json_object_set_new(o, "ino", json_integer((json_int_t)e->ino));
	json_object_set_new(o, "nlink", json_integer((json_int_t)e->nlink));
	json_object_set_new(o, "apparent_bytes", json_integer(e->size));
	json_object_set_new(o, "mtime_ns", json_integer(e->mtime_ns));
	json_object_set_new(o, "mtime", json_string(mt));
	json_object_set_new(o, "age_seconds", json_integer((json_int_t)e->age));
	json_object_set_new(o, "disk_bytes", json_integer((json_int_t)e->allocated));
	/* planned: what removing it frees, given the rest of the plan; in a
	 * plan file (plan/2) freed_bytes says the same, as it always did */
	json_object_set_new(o, "freed_bytes", json_integer((json_int_t)e->freed));
	json_object_set_new(o, "planned_bytes", json_integer((json_int_t)e->freed));
	json_object_set_new(o, "model", e->model ? json_string(e->model) : json_null());
	json_object_set_new(o, "note", e->note ? json_string(e->note) : json_null());
	return o;
}

/* rm --child: what the list tag becomes; null for any other plan. */
static json_t *rewrite_json(const oa_plan_rewrite *rw)
{
	if (!rw)
		return json_null();
	static const char *const kinds[] = { "symlink", "hardlink", "copy", "file" };
	const char *k = kinds[rw->kind == 'l' ? 0 : rw->kind == 'h' ? 1 : rw->kind == 'c' ? 2 : 3];
	json_t *kept = json_array();
	char *runners = oa_xstrdup(rw->kept);
	for (char *save = NULL, *w = strtok_r(runners, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
		json_array_append_new(kept, json_string(w));
	free(runners);
	return json_pack("{s:s, s:s, s:s+, s:o, s:I, s:s+, s:s+, s:s, s:b, s:s?}", "path", rw->path, "child_removed",
	                 rw->runner, "child_digest", "sha256:", rw->child, "children_kept", kept, "entries_removed",
	                 (json_int_t)rw->entries_removed, "list_digest", "sha256:", rw->old_list, "new_list_digest",
	                 "sha256:", rw->new_list, "tag_kind", k, "anchor_removed", rw->anchor_removed, "anchor",
	                 rw->anchor);
}

json_t *oa_plan_to_json(const oa_plan *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string(OA_PLAN_SCHEMA));
	json_object_set_new(o, "command", json_string(p->command));
	json_object_set_new(o, "created", json_string(p->created));
	json_object_set_new(o, "store", json_string(p->store));
	json_object_set_new(o, "store_dev", json_integer((json_int_t)p->store_dev));
	json_object_set_new(o, "store_ino", json_integer((json_int_t)p->store_ino));
	json_t *what = json_array();
	for (int c = 0; c < OA_JUNK_CAT_COUNT; c++)
		if (p->what & (1u << c))
			json_array_append_new(what, json_string(oa_junk_cat_name((enum oa_junk_cat)c)));
	json_object_set_new(o, "what", what);
	json_object_set_new(o, "min_age_seconds", json_integer(p->min_age));
	json_object_set_new(o, "freed_bytes", json_integer((json_int_t)p->freed));
	json_object_set_new(o, "planned_bytes", json_integer((json_int_t)p->freed));
	json_object_set_new(o, "disk_bytes", json_integer((json_int_t)p->allocated));
	json_object_set_new(o, "apparent_bytes", json_integer((json_int_t)p->apparent));
	json_t *v = json_array();
	for (size_t i = 0; i < p->todo.n; i++)
		json_array_append_new(v, plan_entry_json(&p->todo.v[i]));
	json_object_set_new(o, "entries", v);
	json_t *k = json_array();
	for (size_t i = 0; i < p->kept.n; i++)
		json_array_append_new(k, plan_entry_json(&p->kept.v[i]));
	json_object_set_new(o, "kept", k);
	if (strcmp(p->command, "rm") == 0) {
		json_t *sv = json_array();
		for (size_t i = 0; i < p->n_shadows; i++)
			json_array_append_new(sv, json_pack("{s:s, s:s, s:I, s:b}", "name", p->shadows[i].name, "path",
			                                    p->shadows[i].path, "bytes_only_it_holds",
			                                    (json_int_t)p->shadows[i].bytes_only_it_holds, "removed",
			                                    p->shadows[i].removed));
		json_object_set_new(o, "shadows", sv);
		json_object_set_new(o, "list_rewrite", rewrite_json(p->rewrite));
		if (p->rewrite) { /* rm DIGEST may rewrite several lists */
			json_t *all = json_array();
			for (const oa_plan_rewrite *rw = p->rewrite; rw; rw = rw->next)
				json_array_append_new(all, rewrite_json(rw));
			json_object_set_new(o, "list_rewrites", all);
		}
	}
	return o;
}

int oa_plan_write(const oa_plan *p, const char *file, char *err, size_t errlen)
{
	char *dir = oa_xstrdup(file);
	char *slash = strrchr(dir, '/');
	const char *name = file;
	int dfd;
	if (slash) {
		*slash = '\0';
		name = file + (slash - dir) + 1;
		dfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (dfd < 0) {
		snprintf(err, errlen, "%s: cannot open its directory: %s", file, strerror(errno));
		free(dir);
		return -1;
	}
	json_t *v = oa_plan_to_json(p);
	/* A list rewrite (rm --child) is done as planned or not at all: read
	 * back, its entry would be a tag's removal. */
	if (p->rewrite) {
		snprintf(err, errlen, "--plan %s: a plan that rewrites a list (rm --child, rm of a list child's "
		         "digest) is not saved; apply it with --apply", file);
		json_decref(v);
		close(dfd);
		free(dir);
		return -1;
	}
	json_object_del(v, "list_rewrite"); /* the report's, not the plan file's */
	json_object_del(v, "list_rewrites");
	char rroot[PATH_MAX];
	if (realpath(p->store, rroot))
		json_object_set_new(v, "store", json_string(rroot));
	char why[512];
	int rc = oa_json_write_at(dfd, name, v, why, sizeof why);
	if (rc < 0)
		snprintf(err, errlen, "--plan %s: %s", file, why);
	json_decref(v);
	close(dfd);
	free(dir);
	return rc;
}

static int entry_from_json(json_t *o, const char *command, oa_plan_entry *e, char *err,
                           size_t errlen, size_t idx)
{
	const char *path = json_string_value(json_object_get(o, "path"));
	const char *cat = json_string_value(json_object_get(o, "category"));
	const char *type = json_string_value(json_object_get(o, "type"));
	json_t *dg = json_object_get(o, "digest");
	if (!plan_path_parts(path)) {
		snprintf(err, errlen, "entry %zu: path is missing or not a path inside the store", idx);
		return -1;
	}
	if (!cat || !plan_type_char(type)) {
		snprintf(err, errlen, "entry %zu (%s): bad category or type", idx, path);
		return -1;
	}
	e->type = plan_type_char(type);
	path_kind kind = plan_path_kind(command, path, e->type);
	if (kind == PK_BAD) {
		snprintf(err, errlen, "entry %zu (%s, %s): not something `%s` removes", idx, path, type, command);
		return -1;
	}
	if (json_is_string(dg)) {
		const char *d = json_string_value(dg);
		if (strlen(d) != 71 || strncmp(d, "sha256:", 7) != 0 || !oa_is_hex(d + 7, 64)) {
			snprintf(err, errlen, "entry %zu (%s): bad digest", idx, path);
			return -1;
		}
	}
	e->path = oa_xstrdup(path);
	/* Safety comes from the path alone: the plan's digest, check_refs,
	 * empty_dir and category are not trusted. */
	plan_path_hex(path, e->hex);
	e->check_refs = kind == PK_BLOB;
	e->empty_dir = kind == PK_MANIFEST_DIR;
	e->category = oa_xstrdup(kind == PK_MANIFEST ? "manifest"
	                         : kind == PK_MANIFEST_DIR ? (strcmp(command, "rm") == 0 ? "empty-dir" : "empty-dirs")
	                         : cat);
	if (!oa_json_get_u64(o, "dev", &e->dev) || !oa_json_get_u64(o, "ino", &e->ino) ||
	    !oa_json_get_i64(o, "apparent_bytes", &e->size) || !oa_json_get_i64(o, "mtime_ns", &e->mtime_ns)) {
		snprintf(err, errlen, "entry %zu (%s): dev, ino, apparent_bytes and mtime_ns are required", idx, path);
		return -1;
	}
	oa_json_get_u64(o, "nlink", &e->nlink);
	oa_json_get_u64(o, "disk_bytes", &e->allocated);
	if (!oa_json_get_u64(o, "planned_bytes", &e->freed))
		oa_json_get_u64(o, "freed_bytes", &e->freed);
	const char *note = json_string_value(json_object_get(o, "note"));
	const char *model = json_string_value(json_object_get(o, "model"));
	if (note)
		e->note = oa_xstrdup(note);
	if (model)
		e->model = oa_xstrdup(model);
	e->age = oa_wall_now() - (double)e->mtime_ns / 1e9;
	return 0;
}

int oa_plan_read(const char *file, oa_plan *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	json_error_t jerr;
	json_t *o = json_load_file(file, 0, &jerr);
	if (!o) {
		snprintf(err, errlen, "%s: not a plan: %s (line %d)", file, jerr.text, jerr.line);
		return -1;
	}
	const char *schema = json_string_value(json_object_get(o, "schema"));
	const char *cmd = json_string_value(json_object_get(o, "command"));
	const char *store = json_string_value(json_object_get(o, "store"));
	json_t *entries = json_object_get(o, "entries");
	int rc = -1;
	if (schema && strcmp(schema, "ollama-audit.plan/1") == 0) {
		snprintf(err, errlen, "%s: a plan of an older ollama-audit (%s); plan again", file, schema);
		goto out;
	}
	if (!schema || strcmp(schema, OA_PLAN_SCHEMA) != 0) {
		snprintf(err, errlen, "%s: not a plan (schema is not %s)", file, OA_PLAN_SCHEMA);
		goto out;
	}
	if (!cmd || (strcmp(cmd, "prune") && strcmp(cmd, "rm")) || !store || !json_is_array(entries) ||
	    !oa_json_get_u64(o, "store_dev", &p->store_dev) || !oa_json_get_u64(o, "store_ino", &p->store_ino)) {
		snprintf(err, errlen, "%s: command, store, store_dev, store_ino and entries are required", file);
		goto out;
	}
	p->command = oa_xstrdup(cmd);
	p->store = oa_xstrdup(store);
	oa_json_get_i64(o, "min_age_seconds", &p->min_age);
	const char *created = json_string_value(json_object_get(o, "created"));
	snprintf(p->created, sizeof p->created, "%s", created ? created : "");
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		oa_plan_entry *e = plan_list_add(&p->todo);
		if (!json_is_object(x) || entry_from_json(x, p->command, e, err, errlen, i) < 0) {
			if (!json_is_object(x))
				snprintf(err, errlen, "entry %zu is not an object", i);
			char tmp[512];
			snprintf(tmp, sizeof tmp, "%s: %s", file, err);
			snprintf(err, errlen, "%s", tmp);
			goto out;
		}
	}
	plan_totals(p);
	rc = 0;
out:
	json_decref(o);
	if (rc < 0)
		oa_plan_free(p);
	return rc;
}

int oa_plan_read_for(const char *file, const oa_store *s, const char *command, int64_t min_age, oa_plan *p,
                     char *err, size_t errlen)
{
	if (oa_plan_read(file, p, err, errlen) < 0)
		return OA_PLAN_UNREADABLE;
	int rc = 0;
	if (p->store_dev != (uint64_t)s->root_st.st_dev || p->store_ino != (uint64_t)s->root_st.st_ino) {
		snprintf(err, errlen, "the plan %s was made for another store (%s)", file, p->store);
		rc = OA_PLAN_OTHER_STORE;
	} else if (strcmp(p->command, command) != 0) {
		snprintf(err, errlen, "%s is a plan for `%s`; apply it with `ollama-audit %s --apply --plan %s`", file,
		         p->command, p->command, file);
		rc = OA_PLAN_OTHER_COMMAND;
	}
	if (rc)
		oa_plan_free(p);
	else if (min_age >= 0)
		p->min_age = min_age;
	return rc;
}
