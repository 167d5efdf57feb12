/* report_html.c - `report` as one self-contained HTML page (report_html.h).
 * A view: it draws an oa_overview_store, it reads nothing. */
#include "ollama_audit/report_html.h"
#include "ollama_audit/treemap.h"
#include "base/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- text -------------------------------------------------------------- */

/* e (escaped: valid UTF-8, nothing unsafe) as HTML text. */
static void html_escaped(FILE *out, const char *e, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)e;
	size_t len = strlen(e), chars = 0;
	for (size_t i = 0; i < len;) {
		size_t n = oa_utf8_seq(p + i, len - i);
		if (!n)
			n = 1; /* cannot happen after oa_escape; never loop */
		if (max_chars && ++chars > max_chars - 1 && i + n < len) {
			fputs("\u2026", out);
			break;
		}
		switch (n == 1 ? p[i] : 0) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fwrite(p + i, 1, n, out);
		}
		i += n;
	}
}

void oa_html_text(FILE *out, const char *s, size_t max_chars)
{
	char *e = oa_escape(s ? s : "", s ? strlen(s) : 0); /* valid UTF-8; controls and bidi as \uNNNN */
	html_escaped(out, e, max_chars);
	free(e);
}

/* A fix, to be pasted as it reads: printable already (its shell words
 * quote what is not), so no backslash doubled, which would change it. */
static void html_command(FILE *out, const char *s)
{
	char *e = oa_printable(s);
	html_escaped(out, e, 0);
	free(e);
}

static void size_text(FILE *out, uint64_t bytes, enum oa_units units)
{
	char b[48];
	oa_format_size(bytes, units, b, sizeof b);
	fputs(b, out);
}

/* ---- the page ---------------------------------------------------------- */

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1180px;"
	"padding:16px 24px;color:#1d2430;background:#fff}"
	"h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:28px 0 4px;border-bottom:2px solid #dde3ea;"
	"padding-bottom:4px;word-break:break-all}h3{font-size:15px;margin:18px 0 6px}"
	".meta{color:#5b6675;margin:0 0 8px}"
	".totals{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0}"
	".card{flex:1 1 0;border:1px solid #dde3ea;border-radius:6px;padding:6px 10px;min-width:96px;"
	"background:#f7f9fb}"
	".card .v{font-size:18px;font-weight:600;display:block}.card .k{color:#5b6675;font-size:12px}"
	".card small{display:block;color:#7a8593;font-size:11px}"
	".card.junk .v{color:#b42318}.card.free .v{color:#1a7f37}"
	"svg.map{width:100%;height:auto;border:1px solid #dde3ea;border-radius:4px;display:block}"
	"svg.map text{font:11px system-ui,sans-serif;pointer-events:none}"
	".legend span{display:inline-block;margin-right:14px;font-size:12px;color:#5b6675}"
	".legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}"
	"table{border-collapse:collapse;width:100%;font-size:13px}"
	"th,td{padding:3px 8px;border-bottom:1px solid #eef1f4;text-align:left;vertical-align:top}"
	"th{background:#f2f5f8;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums;"
	"white-space:nowrap}td.name{word-break:break-all}"
	"ul.f{list-style:none;padding:0;margin:0}ul.f li{padding:4px 0;border-bottom:1px solid #eef1f4;"
	"word-break:break-word}"
	".sev{display:inline-block;font-size:11px;font-weight:600;border-radius:3px;padding:0 5px;"
	"margin-right:6px;color:#fff}.error{background:#b42318}.warning{background:#b54708}.info{background:#5b6675}"
	"code{font:12px ui-monospace,monospace;background:#f2f5f8;padding:0 3px;border-radius:3px}"
	".remedy{display:block;color:#1a5fb4;font-size:12px;margin-left:4px}"
	".ok{color:#1a7f37}";

/* The fill of a tile: a hue per kind, lighter and darker in turn so
 * neighbours differ. */
static const char *tile_fill(enum oa_tile_kind kind, size_t i)
{
	static const char *const fills[OA_TILE_KINDS][4] = {
		{ "#2f6db5", "#4a86c8", "#3b78bd", "#5b93d1" },
		{ "#d98a1c", "#e8a13d", "#c97c14", "#efb25a" },
		{ "#b42318", "#d0452f", "#9a1f14", "#e06650" },
	};
	return fills[kind][i % 4];
}

static const char *const kind_name[OA_TILE_KINDS] = { "unique to one model", "shared by several models", "junk" };

static void tile_svg(FILE *out, const oa_overview_tile *t, oa_rect r, size_t i, enum oa_units units)
{
	if (r.w <= 0 || r.h <= 0)
		return;
	fprintf(out, "<g><title>");
	oa_html_text(out, t->label, 0);
	fputs(": ", out);
	size_text(out, t->bytes, units);
	fprintf(out, " (%s)", kind_name[t->kind]);
	if (t->blob) {
		fputs(", blob ", out);
		oa_html_text(out, t->blob, 0);
	}
	fprintf(out, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
	             "stroke=\"#fff\" stroke-width=\"1\"/>",
	        r.x, r.y, r.w, r.h, tile_fill(t->kind, i));
	/* A label where it fits: about 6.5 px a character at 11 px, two lines. */
	if (r.w >= 48 && r.h >= 18) {
		size_t chars = (size_t)((r.w - 8) / 6.5);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#fff\">", r.x + 4, r.y + 13);
		oa_html_text(out, t->label, chars);
		fputs("</text>", out);
		if (r.h >= 32) {
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#fff\" opacity=\"0.85\">", r.x + 4, r.y + 27);
			size_text(out, t->bytes, units);
			fputs("</text>", out);
		}
	}
	fputs("</g>\n", out);
}

/* Two levels: the kinds share the whole map by their bytes, then each
 * kind's tiles share its rectangle. */
static void treemap_svg(FILE *out, const oa_overview_store *st, enum oa_units units)
{
	const double W = 1000, H = 420;
	double group[OA_TILE_KINDS] = { 0, 0, 0 };
	for (size_t i = 0; i < st->n_tiles; i++)
		group[st->tiles[i].kind] += (double)st->tiles[i].bytes;
	if (group[0] + group[1] + group[2] <= 0) {
		fputs("<p class=\"meta\">No bytes to show: the store holds no blobs.</p>\n", out);
		return;
	}
	oa_rect area[OA_TILE_KINDS];
	oa_treemap_layout(group, OA_TILE_KINDS, (oa_rect){ 0, 0, W, H }, area);
	/* No xmlns: the HTML parser puts inline <svg> in the SVG namespace, and
	 * the page then holds no address at all. */
	fprintf(out, "<svg class=\"map\" viewBox=\"0 0 %.0f %.0f\" "
	             "role=\"img\" aria-label=\"where the bytes go\">\n", W, H);
	for (int k = 0; k < OA_TILE_KINDS; k++) {
		size_t n = 0;
		for (size_t i = 0; i < st->n_tiles; i++)
			n += st->tiles[i].kind == (enum oa_tile_kind)k;
		if (!n)
			continue;
		double *sizes = oa_xcalloc(n, sizeof *sizes);
		const oa_overview_tile **t = oa_xcalloc(n, sizeof *t);
		oa_rect *r = oa_xcalloc(n, sizeof *r);
		size_t m = 0;
		for (size_t i = 0; i < st->n_tiles; i++)
			if (st->tiles[i].kind == (enum oa_tile_kind)k) {
				t[m] = &st->tiles[i];
				sizes[m++] = (double)st->tiles[i].bytes;
			}
		oa_treemap_layout(sizes, n, area[k], r);
		for (size_t i = 0; i < n; i++)
			tile_svg(out, t[i], r[i], i, units);
		free(sizes);
		free(t);
		free(r);
	}
	fputs("</svg>\n<p class=\"legend\">", out);
	for (int k = 0; k < OA_TILE_KINDS; k++) {
		fprintf(out, "<span><i style=\"background:%s\"></i>%s: ", tile_fill((enum oa_tile_kind)k, 0),
		        kind_name[k]);
		size_text(out, (uint64_t)group[k], units);
		fputs("</span>", out);
	}
	fputs("</p>\n", out);
}

static void card(FILE *out, const char *cls, const char *key, uint64_t bytes, const char *extra,
                 enum oa_units units)
{
	fprintf(out, "<div class=\"card%s%s\"><span class=\"v\">", *cls ? " " : "", cls);
	size_text(out, bytes, units);
	fprintf(out, "</span><span class=\"k\">%s</span><small data-key=\"%s\">%" PRIu64 " bytes%s</small></div>\n",
	        key, key, bytes, extra);
}

static void totals_html(FILE *out, const oa_overview_totals *t, enum oa_units units, bool fleet)
{
	fputs("<div class=\"totals\">\n", out);
	if (fleet)
		fprintf(out, "<div class=\"card\"><span class=\"v\">%zu</span><span class=\"k\">stores</span></div>\n",
		        t->stores);
	fprintf(out, "<div class=\"card\"><span class=\"v\" data-key=\"models\">%zu</span><span class=\"k\">models"
	             "</span><small data-key=\"manifests\">%zu distinct manifest%s</small></div>\n",
	        t->models, t->manifests, t->manifests == 1 ? "" : "s");
	card(out, "", "referenced", t->referenced, "", units);
	card(out, "", "unique", t->unique, "", units);
	card(out, "", "shared", t->shared, "", units);
	char extra[64];
	snprintf(extra, sizeof extra, ", %zu entr%s", t->junk_entries, t->junk_entries == 1 ? "y" : "ies");
	card(out, "junk", "junk", t->junk, extra, units);
	card(out, "free", "reclaimable", t->reclaimable, "", units);
	card(out, "", "blobs", t->blobs, "", units);
	if (t->quarantine_known) {
		snprintf(extra, sizeof extra, ", %zu entr%s", t->quarantine_entries,
		         t->quarantine_entries == 1 ? "y" : "ies");
		card(out, "", "quarantine", t->quarantine_bytes, extra, units);
	}
	fprintf(out, "<div class=\"card\"><span class=\"v\">%zu / %zu / %zu</span><span class=\"k\">errors / "
	             "warnings / infos</span></div>\n</div>\n",
	        t->findings[OA_SEV_ERROR], t->findings[OA_SEV_WARNING], t->findings[OA_SEV_INFO]);
	/* Junk by category, as du's footer lists it. */
	if (t->junk_entries) {
		fputs("<p class=\"meta\">junk: ", out);
		bool first = true;
		for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
			if (!t->junk_count[k])
				continue;
			fprintf(out, "%s%s ", first ? "" : ", ", oa_junk_cat_name((enum oa_junk_cat)k));
			size_text(out, t->junk_bytes[k], units);
			fprintf(out, " (%zu)", t->junk_count[k]);
			first = false;
		}
		fputs(". <code>ollama-audit prune</code> shows what it would remove; reclaimable is what it frees "
		      "now (orphans, partials, temps older than 1 h).</p>\n", out);
	}
}

static void cell_text(FILE *out, const char *s)
{
	fputs("<td>", out);
	oa_html_text(out, s ? s : "-", 0);
	fputs("</td>", out);
}

static void last_use(FILE *out, const oa_overview_store *st, const oa_overview_model *m, int64_t now_ns)
{
	if (!st->have_logs) {
		fputs("<td>-</td>", out);
		return;
	}
	if (!m->loaded) {
		fputs("<td>never</td>", out);
		return;
	}
	char age[64], iso[64];
	oa_human_age(oa_age_ns(m->last_ns, now_ns), age, sizeof age);
	oa_iso8601((time_t)(m->last_ns / 1000000000), 0, iso, sizeof iso);
	fprintf(out, "<td><time datetime=\"%s\" title=\"%s\">%s</time></td>", iso, iso, age);
}

static void models_html(FILE *out, const oa_overview_store *st, const oa_report_html_opts *o)
{
	fprintf(out, "<h3>Models (%zu)</h3>\n", st->n_models);
	if (!st->n_models) {
		fputs("<p class=\"meta\">No models.</p>\n", out);
		return;
	}
	fputs("<table class=\"models\"><thead><tr><th>name</th><th>format</th><th>runner</th><th>arch</th>"
	      "<th>params</th><th>quant</th><th>size</th><th>unique</th><th>on disk</th><th>last used</th>"
	      "</tr></thead><tbody>\n", out);
	for (size_t i = 0; i < st->n_models; i++) {
		const oa_overview_model *m = &st->models[i];
		fputs("<tr><td class=\"name\">", out);
		oa_html_text(out, m->name, 0);
		fputs("</td>", out);
		cell_text(out, m->format);
		cell_text(out, m->runner);
		cell_text(out, m->arch);
		cell_text(out, m->params);
		cell_text(out, m->quant);
		fputs("<td class=\"n\">", out);
		if (!m->size_known)
			fputs("-", out);
		else if (m->size < 0)
			fprintf(out, "%" PRId64 " B", m->size);
		else
			size_text(out, (uint64_t)m->size, o->units);
		fputs("</td><td class=\"n\">", out);
		size_text(out, m->unique, o->units);
		fputs("</td><td class=\"n\">", out);
		size_text(out, m->disk, o->units);
		fputs("</td>", out);
		last_use(out, st, m, o->now_ns);
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
}

static void finding_html(FILE *out, const oa_finding *f)
{
	fprintf(out, "<li><span class=\"sev %s\">%s</span><code>%s</code> ", oa_severity_name(f->severity),
	        oa_severity_name(f->severity), f->code);
	if (f->model) {
		fputs("<b>", out);
		oa_html_text(out, f->model, 0);
		fputs("</b> ", out);
	}
	if (f->path) {
		oa_html_text(out, f->path, 0);
		fputs(": ", out);
	}
	oa_html_text(out, f->message, 0);
	if (f->fix) {
		fputs("<span class=\"remedy\">\u2192 ", out);
		html_command(out, f->fix);
		fputs("</span>", out);
	}
	fputs("</li>\n", out);
}

static void findings_html(FILE *out, const oa_overview_store *st)
{
	static const char *const heads[3] = { "Information", "Warnings", "Errors" };
	fprintf(out, "<h3>Findings (%zu)</h3>\n", st->n_findings);
	if (!st->n_findings) {
		fputs("<p class=\"ok\">No findings: the structure pass found nothing wrong.</p>\n", out);
		return;
	}
	size_t i = 0;
	for (int sev = OA_SEV_ERROR; sev >= OA_SEV_INFO; sev--) {
		if (!st->t.findings[sev])
			continue;
		fprintf(out, "<h4>%s (%zu)</h4>\n<ul class=\"f\">\n", heads[sev], st->t.findings[sev]);
		for (; i < st->n_findings && (int)st->findings[i]->severity == sev; i++)
			finding_html(out, st->findings[i]);
		fputs("</ul>\n", out);
	}
}

static void store_html(FILE *out, const oa_overview_store *st, size_t idx, const oa_report_html_opts *o)
{
	fprintf(out, "<section class=\"store\" id=\"store-%zu\">\n<h2>", idx + 1);
	oa_html_text(out, st->root, 0);
	fputs("</h2>\n<p class=\"meta\">owner ", out);
	oa_html_text(out, st->user, 0);
	fputs(" \u00b7 found by ", out);
	oa_html_text(out, st->how, 0);
	fputs("</p>\n", out);
	totals_html(out, &st->t, o->units, false);
	fputs("<h3>Where the bytes go</h3>\n", out);
	treemap_svg(out, st, o->units);
	models_html(out, st, o);
	findings_html(out, st);
	fputs("</section>\n", out);
}

/* Several stores: the sum, and a row per store and owner. */
static void fleet_html(FILE *out, const oa_overview_store *v, size_t n, const oa_overview_totals *fleet,
                       const oa_report_html_opts *o)
{
	fprintf(out, "<section id=\"fleet\">\n<h2>All %zu stores</h2>\n", n);
	totals_html(out, fleet, o->units, true);
	fputs("<table class=\"stores\"><thead><tr><th>store</th><th>owner</th><th>models</th><th>referenced</th>"
	      "<th>junk</th><th>reclaimable</th><th>errors</th><th>warnings</th></tr></thead><tbody>\n", out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "<tr><td class=\"name\"><a href=\"#store-%zu\">", i + 1);
		oa_html_text(out, v[i].root, 0);
		fputs("</a></td>", out);
		cell_text(out, v[i].user);
		fprintf(out, "<td class=\"n\">%zu</td>", v[i].t.models);
		uint64_t b[3] = { v[i].t.referenced, v[i].t.junk, v[i].t.reclaimable };
		for (int k = 0; k < 3; k++) {
			fputs("<td class=\"n\">", out);
			size_text(out, b[k], o->units);
			fputs("</td>", out);
		}
		fprintf(out, "<td class=\"n\">%zu</td><td class=\"n\">%zu</td></tr>\n", v[i].t.findings[OA_SEV_ERROR],
		        v[i].t.findings[OA_SEV_WARNING]);
	}
	fputs("</tbody></table>\n</section>\n", out);
}

void oa_report_html(FILE *out, const oa_overview_store *stores, size_t n, const oa_overview_totals *fleet,
                    const oa_report_html_opts *o)
{
	char when[64];
	oa_iso8601((time_t)(o->now_ns / 1000000000), 0, when, sizeof when);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"ollama-audit report\">\n<title>ollama-audit report", out);
	if (o->host) {
		fputs(": ", out);
		oa_html_text(out, o->host, 0);
	}
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>ollama-audit report</h1>\n"
	             "<p class=\"meta\">", css);
	if (o->host) {
		oa_html_text(out, o->host, 0);
		fputs(" \u00b7 ", out);
	}
	fprintf(out, "<time datetime=\"%s\">%s</time> \u00b7 %zu store%s \u00b7 sizes allocated on disk "
	             "(st_blocks), each file once, as <code>ollama-audit du</code> counts them</p>\n",
	        when, when, n, n == 1 ? "" : "s");
	if (!n)
		fputs("<p>No store could be read.</p>\n", out);
	if (n > 1)
		fleet_html(out, stores, n, fleet, o);
	for (size_t i = 0; i < n; i++)
		store_html(out, &stores[i], i, o);
	fputs("</body>\n</html>\n", out);
}
