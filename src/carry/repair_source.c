/* repair_source.c - good copies of damaged blobs (repair_source.h). */
#include "carry/repair_source.h"
#include "ollama_audit/bundle.h"
#include "ollama_audit/discover.h"
#include "carry/bundle_read.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool wanted(const oa_repair_blob *x)
{
	return !x->source && !x->intact;
}

/* The blob x in the blobs/ open at bfd, when it is a regular file of the
 * right size and not the damaged file itself: hashed, and kept as a
 * temporary when asked. */
static void try_file(land *l, int bfd, const char *root, const char *kind, bool keep, oa_repair_blob *x)
{
	char name[80], err[512];
	snprintf(name, sizeof name, "sha256-%s", x->hex);
	int fd = openat(bfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 && errno != ENOENT && !x->note)
		x->note = oa_xasprintf("cannot read %s/blobs/%s: %s", root, name, strerror(errno));
	if (fd < 0)
		return;
	bool fits = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == x->size &&
	            !(x->size_here >= 0 && (uint64_t)st.st_dev == x->st.dev && (uint64_t)st.st_ino == x->st.ino);
	int rc = 1;
	/* no hard link: a mended blob would share its bytes with another store's */
	if (fits && keep)
		rc = land_clone(l, x->hex, x->size, fd, bfd, name, false, x->tmp, &x->how, err, sizeof err);
	else if (fits)
		rc = land_hash_fd(l, x->hex, x->size, fd, err, sizeof err);
	close(fd);
	if (rc == 0) {
		x->source = oa_xasprintf("%s/blobs/%s", root, name);
		x->source_kind = kind;
		free(x->note);
		x->note = NULL;
	} else if (rc < 0 && !x->note) { /* not a mismatch: this copy could not be used */
		x->note = oa_xasprintf("%s/blobs/%s: %s", root, name, err);
	}
}

/* named: a --from, whose failure to open is said (another store's is not:
 * many are private to their users). */
static void from_dir(const char *root, const char *kind, bool named, land *l, bool keep, oa_repair_result *r)
{
	int bfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int blobs = bfd < 0 ? -1 : openat(bfd, "blobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;
	if (bfd >= 0)
		close(bfd);
	if (blobs < 0 && named && !r->source_error)
		r->source_error = oa_xasprintf("%s%s: %s", root, bfd < 0 ? "" : "/blobs", strerror(e));
	if (blobs < 0)
		return;
	r->searched++;
	for (size_t i = 0; i < r->n_blobs && !(l->stop && *l->stop); i++)
		if (wanted(&r->blobs[i]))
			try_file(l, blobs, root, kind, keep, &r->blobs[i]);
	close(blobs);
}

typedef struct member_reader {
	bundle_in *b;
} member_reader;

static ssize_t read_member(void *ctx, void *buf, size_t n, char *err, size_t errlen)
{
	return bundle_in_read(((member_reader *)ctx)->b, buf, n, err, errlen);
}

/* The blob members of a bundle that are damaged here, in the order they come. */
static void from_bundle(const char *path, land *l, bool keep, oa_repair_result *r)
{
	member_reader g;
	bundle_member mb;
	char err[768] = "";
	if (bundle_in_open(&g.b, path, -1, err, sizeof err) < 0) {
		r->source_error = oa_xstrdup(err);
		return;
	}
	r->searched++;
	int rc;
	while ((rc = bundle_in_next(g.b, &mb, err, sizeof err)) == 1 && !(l->stop && *l->stop)) {
		oa_repair_blob *x = NULL;
		for (size_t i = 0; mb.n.kind == OA_MEMBER_BLOB && mb.type == BT_FILE && i < r->n_blobs && !x; i++)
			if (wanted(&r->blobs[i]) && strcmp(r->blobs[i].hex, mb.n.hex) == 0 && r->blobs[i].size == mb.size)
				x = &r->blobs[i];
		if (!x)
			continue;
		char herr[512];
		int ok = keep ? land_copy(l, x->hex, x->size, read_member, &g, x->tmp, herr, sizeof herr)
		              : land_hash(l, x->hex, x->size, read_member, &g, herr, sizeof herr);
		if (ok == 0) {
			x->source = oa_xasprintf("%s:%s", path, mb.n.path);
			x->source_kind = "bundle";
			x->how = keep ? "copy" : NULL;
		}
	}
	if (rc < 0)
		r->source_error = oa_xstrdup(err);
	bundle_in_close(g.b);
}

/* --from: a tar, or a directory holding blobs/ (a store or an unpacked
 * bundle; a .ollama directory's models/ too). */
static void from_given(const char *from, land *l, bool keep, oa_repair_result *r)
{
	struct stat st;
	char *models = oa_path_join(from, "models"), *blobs = oa_path_join(from, "blobs"),
	     *index = oa_path_join(from, OA_BUNDLE_INDEX), *mblobs = oa_path_join(models, "blobs");
	if (stat(from, &st) < 0)
		r->source_error = oa_xasprintf("%s: %s", from, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		from_bundle(from, l, keep, r);
	else if (stat(blobs, &st) == 0)
		from_dir(from, access(index, F_OK) == 0 ? "directory" : "store", true, l, keep, r);
	else if (stat(mblobs, &st) == 0)
		from_dir(models, "store", true, l, keep, r);
	else
		r->source_error = oa_xasprintf("%s holds no blobs/: neither a store nor an unpacked bundle", from);
	free(models);
	free(blobs);
	free(index);
	free(mblobs);
}

void repair_find_sources(const oa_store *s, const char *from, land *l, bool keep, oa_repair_result *r)
{
	if (from) {
		from_given(from, l, keep, r);
		return;
	}
	oa_discovery d;
	oa_discover(&d, NULL, 0);
	for (size_t i = 0; i < d.n; i++) {
		const oa_candidate *k = &d.v[i];
		struct stat st;
		if (k->state != OA_CAND_STORE || !k->root || stat(k->root, &st) < 0 ||
		    (st.st_dev == s->root_st.st_dev && st.st_ino == s->root_st.st_ino))
			continue;
		from_dir(k->root, "store", false, l, keep, r);
	}
	oa_discovery_free(&d);
}
