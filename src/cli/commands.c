/* commands.c - the command table. To add a command: write cmd_NAME() and
 * add its entry here, with the options it takes besides the ones every
 * command takes (COMMON), the formats it produces and its help. An option
 * a command does not take, or a format it does not produce, is a usage
 * error, never ignored (main.c). */
#include "commands.h"
#include "cmd_check.h"
#include "cmd_dedupe.h"
#include "cmd_du.h"
#include "cmd_export.h"
#include "cmd_history.h"
#include "cmd_import.h"
#include "cmd_list.h"
#include "cmd_prune.h"
#include "cmd_repair.h"
#include "cmd_report.h"
#include "cmd_restore.h"
#include "cmd_rm.h"
#include "cmd_show.h"
#include "cmd_stores.h"
#include "cmd_verify.h"
#include "dupes_steps.h"
#include "plan_steps.h"
#include "report_common.h"
#include "base/util.h"

#include <stdio.h>

/* `ollama-audit version`, the same line as -V and --version. */
static int cmd_version(cli *c)
{
	(void)c;
	printf("ollama-audit %s\n", OA_VERSION);
	return 0;
}
#include <string.h>

#define COMMON "store format units fail-on color help version output "
#define READS "platform log root " /* a store's models, and the logs for LAST USED */
#define DATA "table json ndjson csv" /* every command that reports data */
/* list, du and rm select models the same way (audit/select.h). */
#define SELECTION_HELP \
	"--filter EXPR (repeatable, every one must hold), as `hf cache ls` takes it:\n" \
	"KEY OP VALUE, OP one of > < >= <= = !=. size: list's SIZE (1GB, 500MB, 1.5GiB,\n" \
	"bytes); modified: the manifest's age (30d, 12h, 2w); used: the age of the last\n" \
	"load or pull, as --unused-for takes it (needs the logs); format: gguf,\n" \
	"safetensors, ...; runner: llamacpp, mlx, ... E.g. 'size>1GB', 'used>90d',\n" \
	"'runner=mlx'. A bad one is a usage error (exit 16). --sort KEY:asc|KEY:desc\n" \
	"sets the direction; --limit N keeps the first N.\n"

const command cli_commands[] = {
	{
		.name = "list",
		.run = cmd_list,
		.synopsis = "list [PREFIX]",
		.summary = "the models, like `ollama list`, with format and runner",
		.options = COMMON READS "all-users unused-for filter limit quiet verbose sort no-header wide",
		.formats = DATA " tags",
		.render = { [OUT_TABLE] = list_render_table, [OUT_JSON] = list_render_json,
		            [OUT_NDJSON] = list_render_ndjson, [OUT_CSV] = list_render_csv,
		            [OUT_TAGS] = list_render_tags },
		.help = "usage: ollama-audit list [PREFIX] [-q|-v] [--format table|json|ndjson|csv|tags]\n"
		        "                         [--units si|iec|bytes] [--unused-for DURATION]\n"
		        "                         [--filter EXPR]... [--sort KEY] [--limit N]\n"
		        "                         [--no-header] [--wide] [--fail-on SEV]\n"
		        "\n"
		        "List the models of the store newest first, with the NAME, ID, SIZE and MODIFIED\n"
		        "columns of `ollama list` (same values, same rounding) plus FORMAT, RUNNER, ARCH,\n"
		        "PARAMS and QUANT. PREFIX filters names case-insensitively, as in `ollama list`.\n"
		        "--format tags prints the JSON of Ollama's /api/tags.\n"
		        "Problems found on the way (broken manifests, bad names, missing configs) are\n"
		        "counted in one line at the end of stderr, \"N models have problems: ollama-audit\n"
		        "check\"; -v, --verbose prints each one (a part that could not be read is\n"
		        "always named). Like `ollama list`, list exits 0 when it listed (8 when part\n"
		        "of a store could not be read); --fail-on error|warning makes them set the\n"
		        "exit status as in check.\n"
		        "When the server's logs are found (see history), a LAST USED column is added;\n"
		        "--unused-for DURATION lists only the models neither loaded nor pulled within it.\n"
		        "-q, --quiet prints the names only, one per line (like docker images -q).\n"
		        "--sort name|size|unique|modified|last-used|unservable (default modified, newest\n"
		        "first; last-used puts models the logs never saw last; unservable puts first the\n"
		        "models current Ollama refuses to load); --no-header drops the heading.\n"
		        SELECTION_HELP
		        "On a terminal narrower than the table (COLUMNS, else its size) the columns\n"
		        "ollama list does not show are hidden first when that keeps every name whole;\n"
		        "then MODIFIED and LAST USED shorten (2w ago), then the least important columns\n"
		        "go (stderr says which; --wide shows them all), then NAME is cut in the middle\n"
		        "of its repository, keeping its :TAG, down to 24 columns. Piped or with\n"
		        "--output, nothing is hidden or cut. --all-users adds USER, the owner of each\n"
		        "row's store: the first column to go when the terminal is narrow.\n",
	},
	{
		.name = "show",
		.run = cmd_show,
		.synopsis = "show MODEL",
		.summary = "one model in full: manifest, config, layers, headers",
		.options = COMMON READS "all-users tensors cache",
		.formats = DATA,
		.render = { [OUT_TABLE] = show_render_table, [OUT_JSON] = show_render_json,
		            [OUT_NDJSON] = show_render_ndjson, [OUT_CSV] = show_render_csv },
		.help = "usage: ollama-audit show MODEL [--tensors] [--cache FILE]\n"
		        "                        [--format table|json|ndjson|csv]\n"
		        "\n"
		        "Show one model in full: name, ID, paths, config fields, every layer (media type,\n"
		        "digest, declared size, name/from, whether the blob exists and its size on disk),\n"
		        "and a header summary of each weight layer (GGUF or safetensors). MODEL is a name\n"
		        "as Ollama resolves it (defaults for host, namespace and tag; blanks trimmed;\n"
		        ":local dropped; m:tag:cloud is the m:tag-cloud stub) or an ID prefix of at\n"
		        "least 6 hex digits. An exact-case match wins; a name several models match\n"
		        "only case-insensitively is refused as ambiguous. --tensors lists every tensor.\n"
		        "The last paragraph says whether this machine (or --root DIR) can run it, on\n"
		        "which engine, and whether its weights fit the memory (docs/history.md); weights\n"
		        "that verify found corrupt, and that have not changed since, cannot run (the\n"
		        "verify cache, --cache FILE, is read, never written).\n",
	},
	{
		.name = "check",
		.run = cmd_check,
		.synopsis = "check [MODEL...]",
		.summary = "structure pass: references, sizes, names, headers (fast)",
		.options = COMMON READS "all-users",
		.formats = DATA " prometheus",
		.render = { [OUT_TABLE] = findings_render_table, [OUT_JSON] = findings_render_json,
		            [OUT_NDJSON] = findings_render_ndjson, [OUT_CSV] = findings_render_csv },
		.help = "usage: ollama-audit check [MODEL...] [--format table|json|ndjson|csv|prometheus]\n"
		        "                         [--fail-on error|warning]\n"
		        "\n"
		        "The structure pass: presence and size of every referenced blob, names, every\n"
		        "manifest and config, every weight header parsed and cross-checked against the\n"
		        "config, and store-wide findings (orphans, partial downloads, temp files, what\n"
		        "blocks the server's start-up prune). Reads headers only, never whole blobs;\n"
		        "a blob verify found corrupt is reported while verify's cache says it is still\n"
		        "that very file.\n",
	},
	{
		.name = "verify",
		.run = cmd_verify,
		.synopsis = "verify [MODEL...]",
		.summary = "content pass: sha256 of every referenced blob",
		.options = COMMON "platform all-users all changed quick jobs max-duration cache "
		           "progress no-progress",
		.formats = DATA " prometheus",
		.render = { [OUT_TABLE] = findings_render_table, [OUT_JSON] = findings_render_json,
		            [OUT_NDJSON] = findings_render_ndjson, [OUT_CSV] = findings_render_csv },
		.help = "usage: ollama-audit verify [MODEL...] [--all] [--jobs N] [--changed] [--quick]\n"
		        "                          [--max-duration DURATION] [--cache FILE]\n"
		        "                          [--no-progress]\n"
		        "                          [--format table|json|ndjson|csv|prometheus]\n"
		        "\n"
		        "The content pass: sha256 of every blob the selected models reference (--all\n"
		        "adds unreferenced blobs), compared with the blob's name. Parallel (--jobs,\n"
		        "default the online cores), largest blobs first. A cache of good results lives\n"
		        "outside the store ($XDG_CACHE_HOME/ollama-audit/verify-cache.json): --changed\n"
		        "rehashes only blobs whose stat changed since their last good verification;\n"
		        "--quick re-reads every blob but checks it with XXH3-128 against the cached\n"
		        "fingerprint. --max-duration stops after a time budget; the next --changed run\n"
		        "continues where it stopped. A bad blob that several models share is reported\n"
		        "under every one of them. A cache file of another user, writable by group or\n"
		        "others, or a symlink is ignored (a warning).\n",
	},
	{
		.name = "du",
		.run = cmd_du,
		.synopsis = "du",
		.summary = "disk usage per model (unique, shared), junk, reclaimable",
		.options = COMMON READS "all-users duplicates unused-for filter limit quiet sort no-header wide quarantine",
		.formats = DATA " prometheus",
		.render = { [OUT_TABLE] = du_render_table, [OUT_JSON] = du_render_json,
		            [OUT_NDJSON] = du_render_ndjson, [OUT_CSV] = du_render_csv,
		            [OUT_PROMETHEUS] = du_render_prometheus },
		.help = "usage: ollama-audit du [-q] [--format table|json|ndjson|csv|prometheus]\n"
		        "                       [--units si|iec|bytes] [--unused-for DURATION]\n"
		        "                       [--filter EXPR]... [--sort KEY] [--limit N]\n"
		        "                       [--no-header] [--wide] [--all-users --duplicates]\n"
		        "\n"
		        "Disk usage per model, sorted by UNIQUE: bytes only this model uses (what\n"
		        "removing it frees), SHARED with other models, ON DISK (allocated, st_blocks)\n"
		        "and APPARENT (st_size). Hard links count once (device+inode); tags that are the\n"
		        "same manifest are one row. The footer gives the store totals: referenced bytes,\n"
		        "junk by category (orphans, manifest-blobs, partials, temps, legacy, foreign,\n"
		        "empty-dirs), what `prune` would reclaim now, and everything under blobs/.\n"
		        "json/csv give raw bytes.\n"
		        "With the server's logs (see history) a LAST USED column is added; --unused-for\n"
		        "DURATION shows only the models neither loaded nor pulled within it, and the\n"
		        "table ends with what `rm` with the same --unused-for and --filter frees.\n"
		        "-q, --quiet prints the names only, one per line, in the table's order (every\n"
		        "tag of a row: removing them all frees its UNIQUE bytes).\n"
		        "--sort name|size|unique|modified|last-used|unservable (default unique; size is\n"
		        "ON DISK; unservable: the models current Ollama refuses to load first, for\n"
		        "cleanup) orders the rows, and --no-header drops the store and column headings.\n"
		        "On a terminal narrower than the table, columns are hidden and NAME is cut as in\n"
		        "list (--wide: all).\n"
		        SELECTION_HELP
		        "A row is shown when every tag of it passes the filters.\n",
	},
	{
		.name = "prune",
		.run = cmd_prune,
		.synopsis = "prune",
		.summary = "remove junk: orphans, partials, temps (a dry run first)",
		.options = COMMON "platform all-users apply yes plan quarantine what min-age force no-lock "
		           "predict-server server-version verbose",
		.formats = DATA,
		.render = { [OUT_TABLE] = plan_render_table, [OUT_JSON] = plan_render_json,
		            [OUT_NDJSON] = plan_render_ndjson, [OUT_CSV] = plan_render_csv },
		.help = "usage: ollama-audit prune [--what LIST] [--min-age DURATION] [--plan FILE] [-v]\n"
		        "                         [--format table|json|ndjson|csv]\n"
		        "                         [--apply [--yes] [--quarantine DIR] [--force]\n"
		        "                         [--no-lock]]\n"
		        "       ollama-audit prune --predict-server [--server-version V]\n"
		        "                         [--format table|json]\n"
		        "\n"
		        "Remove junk from the store. Without --apply this is a dry run: it prints what\n"
		        "would be removed, a row per kind of junk (an interrupted pull is one row with\n"
		        "its part count) with the bytes freed (allocated); -v lists every file.\n"
		        "--plan FILE saves that plan. --apply removes (asking [y/N] on a terminal;\n"
		        "without one it needs --yes); --apply --plan FILE removes exactly the entries\n"
		        "of that plan and nothing else. Every entry is re-checked just before removal\n"
		        "(same device, inode, size, mtime; no manifest references it) and skipped if\n"
		        "anything changed. Symlinks are removed as links, never followed.\n"
		        "\n"
		        "  --what LIST        orphans,partials,temps (default: what the server's\n"
		        "                     start-up prune deletes), legacy, foreign, manifest-blobs,\n"
		        "                     empty-dirs, all\n"
		        "  --min-age D        skip files younger than D (default 1h; 90s, 30m, 1.5h,\n"
		        "                     2d, 0)\n"
		        "  --quarantine DIR   move instead of delete (same filesystem); `restore DIR`\n"
		        "                     undoes it\n"
		        "  --force            go on although a manifest cannot be parsed or an Ollama\n"
		        "                     server/runner uses the store, or a store sharing its\n"
		        "                     blob files cannot be found (each refuses by default,\n"
		        "                     exit 8)\n"
		        "  --no-lock          go on where the filesystem cannot lock the store or DIR\n"
		        "                     (NFS without its lock service): only when nothing else\n"
		        "                     writes them (refused by default, exit 8)\n"
		        "  --predict-server   print what the server's own start-up prune would delete\n"
		        "  --server-version V which server starts: before-lists (an Ollama before\n"
		        "                     0.40, e.g. 0.33: reads manifests/ only, destroys what\n"
		        "                     only manifests-v2/ names), pr-16590 (also reads\n"
		        "                     manifests-v2/), or newest (0.40 on: retires conversions,\n"
		        "                     fails closed while a tag cannot be read, sweeps\n"
		        "                     metadata/); default: the version the store's server\n"
		        "                     logs last announced, else the newest the layout implies\n"
		        "\n"
		        "Exit: 0 done, 8 refused or failed, 16 usage (or --apply without --yes and no\n"
		        "terminal), 32 interrupted. Declining the prompt exits 0: nothing done.\n",
	},
	{
		.name = "rm",
		.run = cmd_rm,
		.synopsis = "rm MODEL...",
		.summary = "remove models offline, keeping blobs others still use",
		.options = COMMON READS "apply yes plan quarantine min-age force no-lock unused-for filter limit sort "
		           "quiet verbose with-shadow child",
		.formats = DATA,
		.render = { [OUT_TABLE] = plan_render_table, [OUT_JSON] = plan_render_json,
		            [OUT_NDJSON] = plan_render_ndjson, [OUT_CSV] = plan_render_csv },
		.help = "usage: ollama-audit rm MODEL... [--plan FILE] [--format table|json|ndjson|csv]\n"
		        "                        [--apply [--yes] [--quarantine DIR]\n"
		        "                        [--force] [--no-lock] [--min-age DURATION]]\n"
		        "                        [--with-shadow] [-v | -q]\n"
		        "       ollama-audit rm [MODEL...] --unused-for DURATION [--plan FILE]\n"
		        "       ollama-audit rm [MODEL...] --filter EXPR... [--sort KEY] [--limit N]\n"
		        "       ollama-audit rm MODEL --child ggml|llamacpp|mlx [--with-shadow]\n"
		        "                        [--apply ...]\n"
		        "\n"
		        "The offline `ollama rm`. A dry run unless --apply: prints a row per model\n"
		        "(NAME, FREES, LAST USED, PULLED) and what is kept and why; -v lists the\n"
		        "manifests, the directories they leave empty and the blobs no other manifest\n"
		        "(parseable or not) can reference, each with the exact bytes it frees; -q the\n"
		        "names of the models planned, one a line. --apply removes the manifests first,\n"
		        "then the empty directories, then the blobs, so a crash never leaves a manifest\n"
		        "pointing at a removed blob. Same confirmation, --plan, --quarantine, --force,\n"
		        "--no-lock and safety rules as prune; --min-age applies to blobs only when given.\n"
		        "--unused-for DURATION (a dry run only) plans the models (named, or all) neither\n"
		        "loaded (the server's logs) nor pulled (manifest mtime) within it, and says how\n"
		        "far back the logs go. --filter, --sort and --limit (a dry run only) plan\n"
		        "exactly the models `list` shows with the same options:\n"
		        SELECTION_HELP
		        "Or name them: `ollama-audit rm $(ollama-audit list -q --unused-for 90d)` plans\n"
		        "what list names; when it names none, rm says there is nothing to remove and\n"
		        "exits 0 (with --apply: removes them, asking first).\n"
		        "A converted model's compatibility shadow (llamacpp:<hex>) stays, as with\n"
		        "`ollama rm`, and rm says so; --with-shadow removes it too, with the blobs only\n"
		        "it then holds.\n"
		        "--child RUNNER removes one child of a manifest list: the list tag is rewritten\n"
		        "without it (a new list blob, the tag replaced by rename), then the blobs only\n"
		        "that child used go. Dropping the ggml child removes its downgrade anchor too\n"
		        "(an older Ollama then no longer sees the model); dropping the converted\n"
		        "llamacpp child leaves its shadow unless --with-shadow. Refused for a tag that\n"
		        "is not a list, a child not here, or the last child here; not with --plan.\n"
		        "MODEL may be a digest, as for `ollama rm`: sha256-<hex>, sha256:<hex> or 12 to\n"
		        "64 hex digits (a list row's ID). A list child's digest removes that child from\n"
		        "every list holding it (each rewritten as --child does; a list left with no\n"
		        "child here goes, with its anchor), as the only MODEL; a prefix that begins\n"
		        "several digests is refused with them (exit 16); a tag's own ID removes the tag.\n",
	},
	{
		.name = "repair",
		.run = cmd_repair,
		.synopsis = "repair [MODEL...]",
		.summary = "mend damaged blobs, or clear them for a pull (dry run)",
		.options = COMMON "platform apply yes from verify quarantine cache jobs no-lock",
		.formats = DATA,
		.render = { [OUT_TABLE] = repair_render_table, [OUT_JSON] = repair_render_json,
		            [OUT_NDJSON] = repair_render_ndjson, [OUT_CSV] = repair_render_csv },
		.help = "usage: ollama-audit repair [MODEL...] [--from FILE|DIR|STORE] [--verify]\n"
		        "                          [--cache FILE] [--format table|json|ndjson|csv]\n"
		        "                          [--apply [--yes] [--quarantine DIR] [--no-lock]]\n"
		        "\n"
		        "Mend the damaged blobs of the models (all when none is named): missing, empty,\n"
		        "truncated or of another size than their manifests declare, or not what their\n"
		        "name says (verify found that very file corrupt, --cache FILE; or hashed now,\n"
		        "--verify). For each, a good copy: from --from (export's bundle, a directory of\n"
		        "one, or a store), else from every other store on this machine (the ones\n"
		        "`stores` lists) that holds the digest, hashed before use. A dry run unless\n"
		        "--apply (asking [y/N] on a terminal; without one it needs --yes), under the\n"
		        "store's write lock: the good copy goes in under a temporary name and is\n"
		        "renamed over the damaged file (set aside into --quarantine DIR first when\n"
		        "given; restore DIR undoes). A blob with no good copy anywhere is removed\n"
		        "(moved into --quarantine DIR when given), because Ollama's pull keeps any\n"
		        "blob file that is there: then `ollama pull NAME` fetches it; a model no\n"
		        "registry has (made with ollama create here) is named, with how to recreate\n"
		        "it. A blob several tags share is repaired once and all of them named.\n"
		        "  --no-lock          go on where the filesystem cannot lock the store or DIR\n"
		        "                     (NFS without its lock service): only when nothing else\n"
		        "                     writes them (refused by default, exit 8)\n"
		        "Exit: 0 nothing damaged or all mended, 4 damage left (a dry run, or a pull to\n"
		        "do), 8 failed, 16 usage, 32 interrupted.\n",
	},
	{
		.name = "restore",
		.run = cmd_restore,
		.synopsis = "restore DIR [MODEL]",
		.summary = "list, put back or empty what --quarantine DIR moved",
		.options = COMMON "all last op empty older-than apply yes quiet no-lock",
		.formats = DATA,
		.render = { [OUT_TABLE] = restore_render_table, [OUT_JSON] = restore_render_json,
		            [OUT_NDJSON] = restore_render_ndjson, [OUT_CSV] = restore_render_csv },
		.help = "usage: ollama-audit restore DIR [-q] [--format table|json|ndjson|csv]\n"
		        "       ollama-audit restore DIR --last | --op ID | MODEL | --all [--store STORE]\n"
		        "                              [--no-lock]\n"
		        "       ollama-audit restore DIR --empty [--older-than DURATION]\n"
		        "                        [--apply [--yes] [--no-lock]]\n"
		        "\n"
		        "Every `prune --apply --quarantine DIR` or `rm --apply --quarantine DIR` is one\n"
		        "operation of DIR. Without a selector, restore lists them (ID, WHEN, COMMAND,\n"
		        "and what DIR holds of each: ENTRIES, SIZE, STATE: held, partial, restored,\n"
		        "deleted, nothing) and changes nothing; -q, --quiet lists their IDs only, one\n"
		        "per line.\n"
		        "  --last             put back the newest operation that still holds entries\n"
		        "  --op ID            put back that operation\n"
		        "  MODEL              put back that model only: its tags and the blobs they\n"
		        "                     need that the store does not have; the rest of its\n"
		        "                     operation stays in DIR. MODEL is matched as rm matches\n"
		        "                     it (exact case first; two models that differ only in\n"
		        "                     case are refused)\n"
		        "  --all              put back everything DIR holds (what `restore DIR` did\n"
		        "                     before operations existed)\n"
		        "Putting back needs no --apply: manifests first, then the rest newest first, into\n"
		        "the store named in DIR/index.json (or --store). Nothing that appeared\n"
		        "meanwhile is replaced: a file that exists again with other content stays in\n"
		        "DIR and the exit status is 4. A blob a model still in DIR needs is linked\n"
		        "back; its file stays in DIR for that model.\n"
		        "  --empty            delete what DIR holds for good (a dry run: what would go\n"
		        "                     and the bytes it frees); --apply deletes (asking [y/N]\n"
		        "                     on a terminal; without one it needs --yes)\n"
		        "  --older-than D     only the operations at least D old (30m, 12h, 7d, 2w)\n"
		        "  --no-lock          go on where the filesystem cannot lock DIR or the store\n"
		        "                     (NFS without its lock service): only when nothing else\n"
		        "                     writes them (refused by default, exit 8)\n",
	},
	{
		.name = "stores",
		.run = cmd_stores,
		.synopsis = "stores",
		.summary = "every store here: owner, size, models, how it was found",
		.options = COMMON "platform all-users all",
		.formats = DATA " prometheus",
		.render = { [OUT_TABLE] = stores_render_table, [OUT_JSON] = stores_render_json,
		            [OUT_NDJSON] = stores_render_ndjson, [OUT_CSV] = stores_render_csv,
		            [OUT_PROMETHEUS] = stores_render_prometheus },
		.help = "usage: ollama-audit stores [--all] [--store DIR]...\n"
		        "                          [--format table|json|ndjson|csv|prometheus]\n"
		        "\n"
		        "Every Ollama store on this machine, with its owner, size on disk, model count\n"
		        "and how it was found: $OLLAMA_MODELS, OLLAMA_MODELS in the systemd unit\n"
		        "ollama.service and its ollama.service.d/*.conf drop-ins (and the\n"
		        "EnvironmentFile= they name), /etc/default/ollama-style files,\n"
		        "<home>/.ollama/models of every account in the password database,\n"
		        "/usr/share/ollama/.ollama/models, /var/lib/ollama, /root/.ollama.\n"
		        "A store reached by several paths (symlinks, bind mounts) is listed once. Then\n"
		        "the totals per user and the blobs duplicated across stores. --all also lists\n"
		        "the places that hold no store. Stores we may not read are listed and set exit\n"
		        "bit 8. --all-users on list, check, verify, du, prune and dedupe audits every\n"
		        "store found.\n",
	},
	{
		.name = "dedupe",
		.run = cmd_dedupe,
		.synopsis = "dedupe",
		.summary = "reflink the blobs several stores hold (dry run)",
		.options = COMMON "platform all-users apply yes force no-lock hardlink verbose",
		.formats = DATA,
		.render = { [OUT_TABLE] = dedupe_render_table, [OUT_JSON] = dedupe_render_json,
		            [OUT_NDJSON] = dedupe_render_ndjson, [OUT_CSV] = dedupe_render_csv },
		.help = "usage: ollama-audit dedupe [--all-users | --store A --store B...] [--hardlink]\n"
		        "                          [--apply [--yes] [--force] [--no-lock]] [-v]\n"
		        "                          [--format table|json|ndjson|csv]\n"
		        "\n"
		        "Replace blobs that several stores hold as separate copies. A dry run unless\n"
		        "--apply. By default reflinks (FICLONE: copy-on-write, separate inodes, safe\n"
		        "across users) where the filesystem supports them (btrfs, XFS, bcachefs, ...);\n"
		        "--hardlink uses hard links, only between stores and files of the same owner.\n"
		        "The dry run tests each target filesystem first and promises no reflink it\n"
		        "cannot make (then it says what --hardlink would free, and what to do about\n"
		        "copies of different owners); copies nothing in their store references are junk\n"
		        "for `prune`, never deduplicated. An --apply that does none of what was planned\n"
		        "exits 8. The text gives one line per store pair and outcome (blobs, bytes);\n"
		        "-v, --verbose one line per blob; json, ndjson and csv list every blob.\n"
		        "Before each replacement both files are re-checked against the scan and hashed\n"
		        "(sha256 = their name); the clone or link goes in under a temporary name and is\n"
		        "renamed over the duplicate. Stores an Ollama server uses are left alone unless\n"
		        "--force; a store whose symlinked blobs/ leads to a store that cannot be found\n"
		        "refuses the --apply (exit 8) unless --force. Stores are locked as prune locks\n"
		        "them (--no-lock alike). --apply asks [y/N] on a terminal; without one it needs\n"
		        "--yes.\n",
	},
	{
		.name = "export",
		.run = cmd_export,
		.synopsis = "export MODEL...",
		.summary = "a verified bundle any tar unpacks into a store",
		.options = COMMON "platform cache",
		.formats = "table json",
		.help = "usage: ollama-audit export MODEL... -o FILE|-|DIR/ [--cache FILE]\n"
		        "                          [--format table|json]\n"
		        "\n"
		        "Write the models as a bundle: a POSIX (pax) tar whose members are store\n"
		        "paths, so that `tar -xf FILE -C ~/.ollama/models` gives a working store: every\n"
		        "blob the models' tags reach (blobs/sha256-<hex>), then their tag files\n"
		        "(manifests/..., and manifests-v2/... with the list's blobs, its children here\n"
		        "and the legacy anchor when the model has them). Two files come first, at the\n"
		        "root: SHA256SUMS, which `sha256sum -c SHA256SUMS` checks in the unpacked tree,\n"
		        "and ollama-audit-bundle.json (the models, digests, sizes and this tool's\n"
		        "version; docs/schema.md). Ollama and ollama-audit ignore both in a store.\n"
		        "`ollama-audit import` reads the bundle back. Every blob is hashed as it is\n"
		        "read (or vouched for by the verify cache, --cache, when verify found that\n"
		        "very file good); one that does not hash to its name stops the export, names\n"
		        "the model and blob, and leaves nothing complete-looking.\n"
		        "  -o FILE   a tar, written under a temporary name and renamed when complete\n"
		        "  -o -      the tar on standard output (cut off, without tar's end-of-archive\n"
		        "            blocks, when the export fails: the reader sees a truncated archive)\n"
		        "  -o DIR/   an unpacked bundle in a new (or empty) directory, renamed into place\n"
		        "The summary goes to standard output (to standard error with -o -). A model\n"
		        "whose blob is missing or damaged is refused (exit 4): mend it first with\n"
		        "repair.\n",
	},
	{
		.name = "import",
		.run = cmd_import,
		.synopsis = "import FILE|DIR|-",
		.summary = "a bundle, or another store's models, in (dry run)",
		.options = COMMON "platform apply yes from verify no-lock",
		.formats = DATA,
		.render = { [OUT_TABLE] = import_render_table, [OUT_JSON] = import_render_json,
		            [OUT_NDJSON] = import_render_ndjson, [OUT_CSV] = import_render_csv },
		.help = "usage: ollama-audit import FILE|DIR|- [--verify]\n"
		        "                          [--format table|json|ndjson|csv]\n"
		        "                          [--apply [--yes] [--no-lock]]\n"
		        "       ollama-audit import --from STORE MODEL... [--apply [--yes] [--no-lock]]\n"
		        "\n"
		        "Put the models of a bundle (export's tar FILE, the same unpacked in DIR, or -\n"
		        "for a tar on standard input) into the store. A dry run unless --apply: what\n"
		        "would be added, what is here already, the bytes it needs against the free\n"
		        "space (--verify also hashes every new blob of the bundle). --apply (asking\n"
		        "[y/N] on a terminal; without one, and always with -, it needs --yes), under\n"
		        "the store's write lock: each new blob is copied under a temporary name in\n"
		        "blobs/ (sha256-<digits>, which prune removes) while it is hashed, and put in\n"
		        "place only when it hashes to its name; a blob here already stays as it is;\n"
		        "the tags last, each written whole, once every blob they reach is here.\n"
		        "Nothing is replaced: a tag here with other content refuses its model (exit 4,\n"
		        "nothing of it written). A bundle holding anything but blobs/sha256-<hex>,\n"
		        "tags, SHA256SUMS and its index (an absolute path, .., a link, a device), a\n"
		        "blob that does not hash to its name, or a cut or corrupt tar, is refused\n"
		        "whole: no tag is written (exit 4).\n"
		        "--from STORE MODEL... copies the models from another store on this machine: a\n"
		        "reflink where the file system can, a hard link where the file system and\n"
		        "owner allow, else a copy; every blob is hashed first, and owned and moded as\n"
		        "the store's. An empty --store directory becomes a store.\n"
		        "  --no-lock          go on where the filesystem cannot lock the store (NFS\n"
		        "                     without its lock service): only when nothing else writes\n"
		        "                     it (refused by default, exit 8)\n"
		        "Exit: 0 done, 4 refused, 8 failed, 16 usage, 32 interrupted.\n",
	},
	{
		.name = "history",
		.run = cmd_history,
		.synopsis = "history [MODEL...]",
		.summary = "the model loads the server logged: when, runner, result",
		.options = COMMON READS "all-users since until unused-for wide",
		.formats = DATA,
		.render = { [OUT_TABLE] = history_render_table, [OUT_JSON] = history_render_json,
		            [OUT_NDJSON] = history_render_ndjson, [OUT_CSV] = history_render_csv },
		.help = "usage: ollama-audit history [MODEL...] [--log FILE]... [--root DIR]\n"
		        "                           [--since WHEN] [--until WHEN] [--wide]\n"
		        "                           [--format table|json|ndjson|csv]\n"
		        "\n"
		        "Every model load an Ollama server recorded in its logs, newest first: the time,\n"
		        "the model (a blob path matched by its digest, from any machine's paths; an MLX\n"
		        "model by its name), its ID, the runner (llamacpp, ollama, mlx), the result (ok,\n"
		        "failed with the server's reason, unknown), memory figures when logged and the\n"
		        "server version. Then per model: last loaded, loads, runners seen. The logs are\n"
		        "server.log and its rotated server-N.log beside the store (<store>/../logs) or\n"
		        "in its owner's ~/.ollama/logs, and ollama.service in the systemd journal (of\n"
		        "--root DIR for a disk from another machine); --log FILE (repeatable, - for\n"
		        "standard input) reads only the files given: journalctl text exports, docker\n"
		        "logs (-t) output or plain server output.\n"
		        "WHEN is an RFC 3339 time, a date (YYYY-MM-DD, UTC) or a duration ago (90d, 12h).\n"
		        "Lines that cannot be read are reported as FILE:LINE warnings on stderr.\n",
	},
	{
		.name = "version",
		.run = cmd_version,
		.synopsis = "version",
		.summary = "print the version (also -V, --version)",
		.options = "help version",
		.formats = "table",
		.help = "usage: ollama-audit version\n"
		        "\n"
		        "Print the version: `ollama-audit VERSION`. -V and --version do the same.\n",
	},
	{
		.name = "report",
		.run = cmd_report,
		.synopsis = "report",
		.summary = "one HTML page: totals, treemap, models, findings",
		.options = COMMON READS "all-users quarantine",
		.formats = "html",
		.help = "usage: ollama-audit report [--output FILE] [--store DIR]... [--all-users]\n"
		        "                          [--format html] [--units si|iec|bytes]\n"
		        "                          [--quarantine DIR]\n"
		        "\n"
		        "One self-contained HTML page of the stores (inline CSS and SVG, no script,\n"
		        "nothing fetched; readable in any browser, or mailed): the totals du prints\n"
		        "(models, referenced, unique, shared, junk, reclaimable), a treemap of where the\n"
		        "bytes go (each model's unique bytes, each shared blob, junk by category; hover\n"
		        "a tile for its name and size), the models as list shows them (format, runner,\n"
		        "quantization, size, last use when the server's logs are found) and the\n"
		        "findings of check, errors first, each with what to do about it. With several\n"
		        "stores (--store A --store B, --all-users) a summary of all of them comes\n"
		        "first, then a section per store and owner. Written to standard output, or\n"
		        "atomically to --output FILE (never inside a store). The exit status is\n"
		        "check's. --format takes html only.\n"
		        "--quarantine DIR adds what that quarantine (prune/rm --quarantine) still holds\n"
		        "to its store's totals.\n",
	},
	{ .name = NULL },
};

static const char usage_head[] =
	"usage: ollama-audit [--store DIR]... COMMAND [OPTIONS] [ARGS]\n"
	"\n"
	"Audit an Ollama model store offline: no server, no network. Read-only, except\n"
	"prune --apply, rm --apply, dedupe --apply, restore, import --apply and\n"
	"repair --apply, which change a store. Start with `ollama-audit list`, then\n"
	"`check` (what is broken) and `du` (where the space goes).\n"
	"\n"
	"Commands:\n";

static const char usage_options[] =
	"\n"
	"Options (`ollama-audit COMMAND --help` lists the ones a command takes):\n"
	"  --store DIR        the store (repeatable); default $OLLAMA_MODELS, else\n"
	"                     ~/.ollama/models, else the one store on the machine\n"
	"                     (see `stores`)\n"
	"  --format FMT       table (default), json, ndjson, csv; list also takes tags;\n"
	"                     check, verify, du and stores also prometheus; report\n"
	"                     writes html only; any other is refused (exit 16)\n"
	"  --all-users        every store on the machine (see `stores`), plus any --store\n"
	"  --output FILE      write standard output to FILE atomically (temp + rename)\n"
	"  --platform OS/ARCH which child of a manifest list a tag uses (default: this\n"
	"                     machine; darwin/arm64 prefers the MLX child)\n"
	"  --units U          si (default, like ollama list), iec, bytes\n"
	"  --fail-on SEV      lowest severity that sets the exit status: error\n"
	"                     (default), warning; list: only when given\n"
	"  --color WHEN       auto (default), always, never; NO_COLOR disables colour\n"
	"  -q, --quiet        list, du, rm: the model names only, one per line;\n"
	"                     restore DIR: the operation IDs\n"
	"  -v, --verbose      list: each problem found, not only how many models have\n"
	"                     one; prune, rm: every file of the plan, not a row per\n"
	"                     model; dedupe: a line per blob, not per pair of stores\n"
	"  -h, --help         this help; `ollama-audit COMMAND --help` for a command\n"
	"  -V, --version      print the version (also: ollama-audit version)\n"
	"\n"
	"Exit status (bits, ORed across stores): 0 ok, 1 warnings (with --fail-on\n"
	"warning), 4 integrity errors, 8 operational error, 16 usage error,\n"
	"32 interrupted. list exits 0 when it listed, unless --fail-on is given.\n"
	"Declining a [y/N] prompt is not an interruption: nothing done, exit 0.\n";

/* The options that have a one-letter form, as help names them. */
static const char *short_form(const char *name, size_t n)
{
	static const char *const forms[][2] = { { "quiet", "-q" }, { "verbose", "-v" }, { "output", "-o" } };
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
		if (strlen(forms[i][0]) == n && strncmp(name, forms[i][0], n) == 0)
			return forms[i][1];
	return NULL;
}

void cli_print_command_options(FILE *out, const command *cmd)
{
	fputs("\nOptions it takes:", out);
	size_t col = 17;
	bool first = true;
	for (const char *p = cmd->options; *p;) {
		size_t n = strcspn(p, " ");
		if (n) {
			const char *letter = short_form(p, n);
			size_t w = (first ? 1 : 2) + (letter ? 4 : 0) + 2 + n;
			if (col + w > 78) {
				fputs(first ? "\n " : ",\n ", out);
				col = 1;
			} else if (!first) {
				fputc(',', out);
			}
			fprintf(out, " %s%s--%.*s", letter ? letter : "", letter ? ", " : "", (int)n, p);
			col += w;
			first = false;
		}
		p += n + (p[n] == ' ');
	}
	fputs(".\n(`ollama-audit --help` explains the common ones.)\n", out);
}

/* "  SYNOPSIS  summary": the summaries start in one column, wrapped at
 * CLI_HELP_WIDTH; a synopsis too long for that column has its summary on
 * the next line. */
static void command_line(FILE *out, const char *synopsis, const char *summary, size_t col)
{
	fprintf(out, "  %s", synopsis);
	size_t at = 2 + strlen(synopsis);
	if (at + 2 > col) {
		fputc('\n', out);
		at = 0;
	}
	bool line_start = true; /* no word of the summary on this line yet */
	for (const char *w = summary; *w; w += strspn(w, " ")) {
		size_t n = strcspn(w, " ");
		if (!line_start && at + 1 + n > CLI_HELP_WIDTH) {
			fputc('\n', out);
			at = 0;
			line_start = true;
		}
		fprintf(out, "%*s%.*s", line_start ? (int)(col - at) : 1, "", (int)n, w);
		at = (line_start ? col : at + 1) + n;
		line_start = false;
		w += n;
	}
	fputc('\n', out);
}

void cli_print_usage(FILE *out)
{
	size_t col = 0;
	for (const command *k = cli_commands; k->name; k++)
		if (strlen(k->synopsis) > col)
			col = strlen(k->synopsis);
	col = col + 4 < 24 ? col + 4 : 24; /* "  " + the synopsis + "  " */
	fputs(usage_head, out);
	for (const command *k = cli_commands; k->name; k++)
		command_line(out, k->synopsis, k->summary, col);
	fputs(usage_options, out);
}

const command *cli_find_command(const char *name)
{
	for (const command *k = cli_commands; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

bool cli_word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

const char *cli_suggest_command(const char *typed)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (const command *k = cli_commands; k->name; k++) {
		size_t d = oa_edit_distance(typed, k->name);
		if (d < best_d) {
			best_d = d;
			best = k->name;
		}
	}
	return oa_edit_close(best_d, strlen(typed)) ? best : NULL;
}
