/* The loop of the Codex lean scan (cc_analytics/frames/codex/scan.py) over clean lines, in C.
 *
 * scan_lines(raw, start, number, sink, state) reads raw from offset start (the line after line
 * `number`), cutting lines on LF and skipping empty ones, and does for each line what scan.scan
 * does, as long as the line is one of the common clean ones; it stops at the first line it
 * cannot take and returns that line's (start, end, number), for scan.scan to read in Python and
 * call again from the next line; None at the end of the data. It takes a line when:
 *
 *   * its first bytes are Codex's head, {"timestamp":"T","type":"K","payload": with T in Codex's
 *     own shape (0000-00-00T00:00:00.000Z, every 0 a digit) and K a word, the payload's own
 *     "type":"P" first when K is response_item or event_msg, and it ends with "}";
 *   * K and P are a pair scan.scan reads without a rule this loop does not apply: response items
 *     it does not measure (only the head is read), messages, agent messages, function and custom
 *     tool calls and their outputs of plain strings (measured as frames/estimate.text_tokens
 *     measures them, exactly, or the line is declined), items it measures nothing of; event
 *     messages other than token_count, user_message (validated), context_compacted and
 *     thread_settings_applied (declined); turn_context (its model, when a plain ASCII string);
 *     token_count in Codex's layout ,"info":INFO,"rate_limits":LIMITS}} (INFO read, LIMITS
 *     validated; a count whose bytes after the timestamp are the previous count's is read once,
 *     as scan.scan reads it); any other K (only the head is read).
 *
 * Every line it parses is validated in full, as the JSON line policy reads it
 * (cc_analytics/jsonline.py: nesting up to MAX_DEPTH, the first of a repeated key wins; an
 * integer beyond 64 bits, an escaped key or a text only the estimate's expression measures is
 * declined). compacted lines are taken too (their replacement history's entries measured as
 * response items are, or their message), unless an entry is one it does not measure.
 * session_meta, thread_settings_applied, lines with an "ordinal" and every line that breaks a
 * rule are Python's.
 *
 * sink: (usage, stamps, models, settings, items, marks), what scan.scan appends to: the usage
 * rows packed in a bytearray (scan.USAGE_ROW: the line and a count's 15 numbers, native int64
 * each, NULL_COUNT for None), their timestamps and models (lists), the settings rows, the items
 * packed in a bytearray (line, bucket, tokens: three native int64 each, summed by item_sums) and
 * the marks.
 * state: [lines, last_line, min_stamp, max_stamp, last_start, last_end, last_values, in_burst],
 * read on entry and written back on return: the lines taken here, the last line with a head,
 * the offsets of the earliest and latest timestamp taken here (-1: none), the span of the last
 * token_count's bytes after its timestamp (-1: none) and what it read of them (a usage tuple or
 * None); scan.scan keeps the last three up to date on the lines it reads itself. in_burst (read
 * only): a fork's leading burst is open, so every token_count is Python's (it may close it).
 *
 * The loop runs without the GIL, so that threads scan rollouts side by side: it keeps what it
 * reads of each line as plain C records, and the rows are made from them with the GIL held again
 * (every FLUSH_AT records, and when the loop stops). Its scratch buffers are its own call's.
 *
 * The JSON primitives are shared with the Claude Code skimmer: ../_jsonscan.h and
 * ../_jsonscan_parse.h. The module initialises in phases (PEP 489) and holds nothing, in
 * static variables or module state. Plain C99 and the CPython C API (3.11 and later).
 */
#include "../_jsonscan.h"
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

typedef enum { X_SKIP = 0, X_TOP, X_PAYLOAD, X_CONTENT, X_PART, X_INFO, X_TOTAL, X_LAST, X_HISTORY, X_ENTRY } Ctx;

/* What a compacted line's replacement history adds: an entry's bucket and tokens. */
typedef struct {
    int bucket;
    long long tokens;
} Entry;

/* Scratch space of one scan_lines call (its loop runs without the GIL: nothing it writes is shared). */
typedef struct {
    Span *keys;
    Py_ssize_t keys_cap, keys_len;
    char *text;
    Py_ssize_t text_cap;
    Level *levels;
    Py_ssize_t levels_cap;
    Entry *entries; /* a compacted line's measured history (see entry_element) */
    Py_ssize_t entries_cap, entries_len;
} Scratch;

/* The usage counts scan._usage reads, in its order (cached: cached_input_tokens, else
 * cache_read_input_tokens). */
enum { U_INPUT = 0, U_CACHED, U_CACHE_READ, U_CACHE_WRITE, U_OUTPUT, U_REASONING, U_TOTAL, U_KEYS };

typedef struct {
    const uint8_t *p, *end;
    const uint8_t *limit;
    int depth;
    int canonical_depth; /* always 0: no text here must be orjson's */
    int canonical;
    Scratch *scratch;
    /* the line's object and its payload */
    Val payload, ptype, output, name, arguments, input, role, content, model;
    /* the parts of a message's content: their joined text's measure, how many have a text,
     * the first one's text, the text of the part being read */
    Measure joined;
    Py_ssize_t parts;
    Val first_text, part_text;
    int past; /* a part's text the estimate's scalar path does not measure (past_cjk) */
    /* a token_count's info */
    Val total, last, window;
    Val counts[2][U_KEYS];
    int model_keys; /* info has model, model_name or metadata */
    /* a compacted line's payload: its message and replacement history (read only when compacted) */
    int compacted;
    Val message, history;
    int history_state; /* 0: every entry measured; DECLINED_ENTRY: one the loop does not measure; FAILED_ENTRY: no memory */
} Parser;

static int parse_value(Parser *P, Val *out, Ctx ctx);

#include "../_jsonscan_parse.h"

#define KEY(lit) (n == (Py_ssize_t)sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)

/* Where the value of key k goes in context ctx (NULL: nowhere), and its own context. */
static Val *target(Parser *P, Ctx ctx, const uint8_t *k, Py_ssize_t n, Ctx *sub) {
    *sub = X_SKIP;
    switch (ctx) {
    case X_TOP:
        if (KEY("payload")) {
            *sub = X_PAYLOAD;
            return &P->payload;
        }
        return NULL;
    case X_PAYLOAD:
    case X_ENTRY: /* a line's payload, or a history entry: the fields of a response item */
        if (KEY("type")) return &P->ptype;
        if (KEY("output")) return &P->output;
        if (KEY("name")) return &P->name;
        if (KEY("arguments")) return &P->arguments;
        if (KEY("input")) return &P->input;
        if (KEY("role")) return &P->role;
        if (KEY("content")) {
            *sub = X_CONTENT;
            return &P->content;
        }
        if (ctx == X_ENTRY) return NULL;
        if (KEY("model")) return &P->model;
        if (P->compacted) {
            if (KEY("message")) return &P->message;
            if (KEY("replacement_history")) {
                *sub = X_HISTORY;
                return &P->history;
            }
        }
        return NULL;
    case X_PART:
        return KEY("text") ? &P->part_text : NULL;
    case X_INFO:
        if (KEY("total_token_usage")) {
            *sub = X_TOTAL;
            return &P->total;
        }
        if (KEY("last_token_usage")) {
            *sub = X_LAST;
            return &P->last;
        }
        if (KEY("model_context_window")) return &P->window;
        if (KEY("model") || KEY("model_name") || KEY("metadata")) P->model_keys = 1;
        return NULL;
    case X_TOTAL:
    case X_LAST: {
        Val *counts = P->counts[ctx == X_LAST];
        if (KEY("input_tokens")) return &counts[U_INPUT];
        if (KEY("cached_input_tokens")) return &counts[U_CACHED];
        if (KEY("cache_read_input_tokens")) return &counts[U_CACHE_READ];
        if (KEY("cache_write_input_tokens")) return &counts[U_CACHE_WRITE];
        if (KEY("output_tokens")) return &counts[U_OUTPUT];
        if (KEY("reasoning_output_tokens")) return &counts[U_REASONING];
        if (KEY("total_tokens")) return &counts[U_TOTAL];
        return NULL;
    }
    default:
        return NULL;
    }
}

/* An object some field is read from: the first occurrence of a key only
 * (jsonline.DUPLICATE_KEYS); the others are validated and skipped. */
static int parse_object(Parser *P, Val *out, Ctx ctx) {
    Val scratch;
    const uint8_t *start = P->p;
    P->p++;
    skip_ws(P);
    if (P->p >= P->end) return 0;
    out->empty = 1;
    if (*P->p != '}') {
        out->empty = 0;
        for (;;) {
            if (P->p >= P->end || *P->p != '"') return 0;
            Val key;
            if (!parse_string(P, &key)) return 0;
            if (key.escaped) return 0;
            skip_ws(P);
            if (P->p >= P->end || *P->p != ':') return 0;
            P->p++;
            skip_ws(P);
            if (P->p >= P->end) return 0;
            Ctx sub = X_SKIP;
            Val *slot = target(P, ctx, key.s, key.e - key.s, &sub);
            if (slot != NULL && slot->t != J_ABSENT) { /* a repeated key: the first one was read */
                slot = NULL;
                sub = X_SKIP;
            }
            if (slot == NULL) slot = &scratch;
            if (!parse_value(P, slot, sub)) return 0;
            int next = after_item(P, '}');
            if (next == 1) continue;
            if (next == 2) break;
            return 0;
        }
    }
    P->p++;
    out->t = J_OBJ;
    out->s = start;
    out->e = P->p;
    return 1;
}

/* A message's content part (an object): its first "text" that is a string is a part of the text
 * (values.content_text joins them with line feeds). */
static int part_element(Parser *P) {
    Val scratch;
    memset(&P->part_text, 0, sizeof(Val));
    if (!parse_value(P, &scratch, X_PART)) return 0;
    if (P->part_text.t == J_STR) {
        if (past_cjk(&P->part_text)) P->past = 1;
        if (P->parts == 0) P->first_text = P->part_text;
        else P->joined.units += 1; /* the line feed between two parts */
        P->joined.units += P->part_text.m.units;
        P->joined.cjk += P->part_text.m.cjk;
        P->joined.ascii = P->joined.ascii && P->part_text.m.ascii;
        P->parts++;
    }
    return 1;
}

/* An array whose objects are read by `element` (a message's content parts, a compacted line's
 * history entries); its other values are validated and skipped. */
static int parse_elements(Parser *P, Val *out, int (*element)(Parser *P)) {
    Val scratch;
    const uint8_t *start = P->p;
    P->p++;
    skip_ws(P);
    if (P->p >= P->end) return 0;
    out->empty = 1;
    if (*P->p != ']') {
        out->empty = 0;
        for (;;) {
            if (P->p >= P->end) return 0;
            if (!(*P->p == '{' ? element(P) : parse_value(P, &scratch, X_SKIP))) return 0;
            int next = after_item(P, ']');
            if (next == 1) continue;
            if (next == 2) break;
            return 0;
        }
    }
    P->p++;
    out->t = J_ARR;
    out->s = start;
    out->e = P->p;
    return 1;
}

enum { DECLINED_ENTRY = 1, FAILED_ENTRY = 2 };
enum { B_SYSTEM = 0, B_USER, B_ASSISTANT, B_TOOL, B_TOOL_CALLS };
static long long text_tokens(const Val *v);

static inline int is(const uint8_t *s, const uint8_t *e, const char *text) {
    size_t n = strlen(text);
    return (size_t)(e - s) == n && memcmp(s, text, n) == 0;
}

/* A history entry's bucket and tokens as values.text_of_item measures them: 1, 0 (nothing
 * measured), or -1 (one the loop does not measure: the line is Python's). */
static int entry_measure(const Parser *P, int *bucket, long long *tokens) {
    const Val *type = &P->ptype;
    if (type->t != J_STR) return 0;
    if (type->escaped) return -1;
    const uint8_t *t = type->s, *e = type->e;
    if (is(t, e, "function_call_output") || is(t, e, "custom_tool_call_output")) {
        *bucket = B_TOOL;
        *tokens = text_tokens(&P->output);
        return *tokens < 0 ? -1 : 1;
    }
    if (is(t, e, "function_call") || is(t, e, "custom_tool_call")) {
        const Val *name = &P->name, *arguments = e - t == 13 ? &P->arguments : &P->input;
        if (name->t != J_STR || arguments->t != J_STR || past_cjk(name) || past_cjk(arguments)) return -1;
        *bucket = B_TOOL_CALLS;
        *tokens = tokens_of(name->m.units + arguments->m.units + 1, name->m.cjk + arguments->m.cjk);
        return 1;
    }
    int message = is(t, e, "message");
    if (message || is(t, e, "agent_message")) {
        *bucket = B_USER;
        if (message) {
            const Val *role = &P->role;
            *bucket = B_ASSISTANT;
            if (role->t == J_STR) {
                if (role->escaped) return -1;
                if (is(role->s, role->e, "user")) *bucket = B_USER;
                else if (is(role->s, role->e, "system") || is(role->s, role->e, "developer")) *bucket = B_SYSTEM;
            }
        }
        const Val *content = &P->content;
        Measure text = {0, 0, 1};
        if (content->t == J_STR) {
            if (past_cjk(content)) return -1;
            text = content->m;
        } else if (content->t == J_ARR) {
            if (P->past) return -1;
            text = P->joined;
        } else if (content->t == J_OBJ) {
            return -1;
        }
        *tokens = tokens_of(text.units, text.cjk);
        return 1;
    }
    if (is(t, e, "local_shell_call") || is(t, e, "web_search_call") || is(t, e, "tool_search_call") ||
        is(t, e, "tool_search_output"))
        return -1; /* measured from JSON values (values.dumped) */
    return 0;
}

/* A compacted line's history entry (an object): read with the fields of a response item and
 * measured into the scratch's entries (scan.scan: text_of_item of each dict entry). */
static int entry_element(Parser *P) {
    Val scratch;
    Scratch *S = P->scratch;
    Val *fields[] = {&P->ptype, &P->output, &P->name, &P->arguments, &P->input, &P->role, &P->content,
                     &P->first_text, &P->part_text};
    for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) memset(fields[k], 0, sizeof(Val));
    memset(&P->joined, 0, sizeof(Measure));
    P->joined.ascii = 1;
    P->parts = 0;
    P->past = 0;
    if (!parse_value(P, &scratch, X_ENTRY)) return 0;
    int bucket = 0;
    long long tokens = 0;
    int got = entry_measure(P, &bucket, &tokens);
    if (got < 0) P->history_state |= DECLINED_ENTRY;
    if (got <= 0 || P->history_state) return 1;
    if (S->entries_len == S->entries_cap) {
        Py_ssize_t cap = S->entries_cap ? S->entries_cap * 2 : 16;
        Entry *grown = PyMem_RawRealloc(S->entries, (size_t)cap * sizeof(Entry));
        if (!grown) {
            P->history_state |= FAILED_ENTRY;
            return 1;
        }
        S->entries = grown;
        S->entries_cap = cap;
    }
    S->entries[S->entries_len++] = (Entry){bucket, tokens};
    return 1;
}

/* The value at P->p (no whitespace before it). Objects and arrays a field is read from take
 * their context; the others are skipped without recursion (skip_value). */
static int parse_value(Parser *P, Val *out, Ctx ctx) {
    switch (*P->p) {
    case '{':
    case '[': {
        int own = *P->p == '{' ? ctx == X_TOP || ctx == X_PAYLOAD || ctx == X_PART || ctx == X_INFO ||
                                     ctx == X_TOTAL || ctx == X_LAST || ctx == X_ENTRY
                               : ctx == X_CONTENT || ctx == X_HISTORY;
        if (!own) return skip_value(P, out);
        if (++P->depth > MAX_DEPTH) return 0;
        int ok = *P->p == '{' ? parse_object(P, out, ctx)
                              : parse_elements(P, out, ctx == X_HISTORY ? entry_element : part_element);
        P->depth--;
        return ok;
    }
    default:
        return parse_scalar(P, out);
    }
}

/* --- Lines ------------------------------------------------------------------------------- */

#define STAMP_SIZE 24 /* 2025-12-18T10:00:00.000Z */

/* Whether s[0:24] has Codex's own timestamp shape (scan.STAMP_SHAPE) and ends the string. */
static int codex_stamp(const uint8_t *s, const uint8_t *end) {
    static const char shape[] = "0000-00-00T00:00:00.000Z";
    if (end - s < STAMP_SIZE + 1 || s[STAMP_SIZE] != '"') return 0;
    for (int k = 0; k < STAMP_SIZE; k++) {
        if (shape[k] == '0') {
            if (s[k] < '0' || s[k] > '9') return 0;
        } else if (s[k] != (uint8_t)shape[k]) {
            return 0;
        }
    }
    return 1;
}

static inline int word_byte(uint8_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A run of word bytes then a quote, from p: its end (the quote), or NULL. */
static const uint8_t *word(const uint8_t *p, const uint8_t *end) {
    const uint8_t *start = p;
    while (p < end && word_byte(*p)) p++;
    return p > start && p < end && *p == '"' ? p : NULL;
}

static inline int starts(const uint8_t *s, const uint8_t *e, const char *text) {
    size_t n = strlen(text);
    return (size_t)(e - s) >= n && memcmp(s, text, n) == 0;
}

/* Whether the decoded text of a string span starts with the ASCII text `prefix`. */
static int decoded_starts(const Val *v, const char *prefix) {
    const uint8_t *s = v->s, *e = v->e;
    for (const char *t = prefix; *t; t++) {
        if (s >= e) return 0;
        unsigned c;
        if (*s == '\\') {
            switch (s[1]) {
            case 'b': c = '\b'; s += 2; break;
            case 'f': c = '\f'; s += 2; break;
            case 'n': c = '\n'; s += 2; break;
            case 'r': c = '\r'; s += 2; break;
            case 't': c = '\t'; s += 2; break;
            case 'u':
                if (!hex4(s + 2, &c)) return 0;
                s += 6;
                break;
            default: c = s[1]; s += 2; break;
            }
        } else {
            c = *s++;
        }
        if (c != (unsigned char)*t) return 0;
    }
    return 1;
}

/* --- What the loop keeps of a line ------------------------------------------------------------
 *
 * The loop reads lines without the GIL (other threads run meanwhile) and keeps what it finds as
 * records, plain C; with the GIL held again, emit() makes the Python rows of scan.scan's lists
 * from them, in line order. A line either gives all its records or none (declined). */

enum { R_ITEM = 0, R_MARK, R_SETTING, R_COUNT, R_REPEAT };
enum { M_PROMPT = 0, M_LEGACY = 1, M_COMPACTED = 2, M_COMPACT_EVENT = 3 }; /* scan.PROMPT, LEGACY, COMPACTED, COMPACT_EVENT */

/* What scan._count_of_body reads of a token_count: None (info is not an object), or the total's
 * and the last request's six counts (each present or not) and the window. */
typedef struct {
    int none;
    int has[2];
    long long counts[2][6];
    long long window; /* -1: None */
} Count;

typedef struct {
    int kind;
    int code; /* R_ITEM: its bucket (B_*); R_MARK: its code (M_*) */
    Py_ssize_t number;
    Py_ssize_t a, b; /* R_ITEM: a, its tokens; R_SETTING: the model's bytes [a, b); counts: a, the stamp's offset */
    Count count;     /* R_COUNT */
} Rec;

typedef struct {
    Rec *rec;
    Py_ssize_t n, cap;
} Recs;

/* The records a loop keeps before emit() turns them into rows (memory stays small and flat). */
#define FLUSH_AT 1024

static Rec *new_rec(Recs *R, int kind, Py_ssize_t number) {
    if (R->n == R->cap) {
        Py_ssize_t cap = R->cap ? R->cap * 2 : 64;
        Rec *grown = PyMem_RawRealloc(R->rec, (size_t)cap * sizeof(Rec));
        if (!grown) return NULL;
        R->rec = grown;
        R->cap = cap;
    }
    Rec *r = &R->rec[R->n++];
    r->kind = kind;
    r->code = 0;
    r->number = number;
    r->a = r->b = 0;
    return r;
}

enum { SINK_USAGE = 0, SINK_STAMPS, SINK_MODELS, SINK_SETTINGS, SINK_ITEMS, SINK_MARKS, SINK_SIZE };
#define COUNT_NUMBERS 15 /* a count's values less its model: has_total, 6 counts, has_last, 6 counts, window */
#define NULL_COUNT INT64_MIN /* None, in a packed usage row (scan.NULL_COUNT) */
#define ITEM_BYTES 24    /* an item in sink[SINK_ITEMS]: line, bucket, tokens, native int64 each */
enum { ST_LINES = 0, ST_LAST_LINE, ST_MIN, ST_MAX, ST_LAST_START, ST_LAST_END, ST_LAST_VALUES, ST_IN_BURST, ST_SIZE };
#define TAKEN 1
#define DECLINED 0
#define FAILED (-1)

/* What one scan_lines call reads and writes back to its state. The last count's values are
 * kept as numbers (last_none: it had no info; last_model: its model, a new reference, or None);
 * last_values is the state's tuple, made anew on return when this call read a count. */
typedef struct {
    Py_ssize_t lines, last_line, min, max, last_start, last_end;
    PyObject *last_values; /* a new reference */
    int64_t last[COUNT_NUMBERS];
    int last_none, last_fresh;
    PyObject *last_model; /* a new reference */
    int in_burst;
} Run;

static void init_parser(Parser *P, Scratch *S, const uint8_t *p, const uint8_t *end, const uint8_t *limit) {
    memset(P, 0, sizeof(Parser));
    P->p = p;
    P->end = end;
    P->limit = limit;
    P->scratch = S;
    P->joined.ascii = 1;
    S->keys_len = 0;
    S->entries_len = 0;
}

/* The line data[start:stop] as a whole, parsed from its first byte: 1 when it is one valid object. */
static int parse_line(Parser *P) {
    Val top;
    if (!parse_value(P, &top, X_TOP)) return 0;
    return top.t == J_OBJ && P->p == P->end;
}

/* A usage object's six counts as scan._usage reads them: 1 (read), 0 (None: not an object),
 * -1 (declined: a count that is not a whole number of 64 bits). */
static int usage_counts(const Val *usage, const Val *counts, long long out[6]) {
    if (usage->t != J_OBJ) return 0;
    const Val *cached = &counts[U_CACHED];
    if (cached->t == J_ABSENT || cached->t == J_NULL) cached = &counts[U_CACHE_READ];
    const Val *order[6] = {&counts[U_INPUT], cached, &counts[U_CACHE_WRITE], &counts[U_OUTPUT],
                           &counts[U_REASONING], &counts[U_TOTAL]};
    for (int k = 0; k < 6; k++) {
        const Val *v = order[k];
        if (v->t == J_ABSENT || v->t == J_NULL) out[k] = 0;
        else if (v->t == J_INT && v->i >= 0) out[k] = v->i;
        else return -1;
    }
    return 1;
}

/* A token_count's body (the bytes after its payload type): DECLINED, or TAKEN with *out set to
 * what scan._count_of_body reads of it. */
static int read_count(Scratch *S, const uint8_t *body, const uint8_t *stop, const uint8_t *limit, Count *out) {
    static const char info_key[] = ",\"info\":", limits_key[] = ",\"rate_limits\":";
    const Py_ssize_t info_n = sizeof(info_key) - 1, limits_n = sizeof(limits_key) - 1;
    if (stop - body < info_n + limits_n + 2 || stop[-1] != '}' || stop[-2] != '}') return DECLINED;
    if (memcmp(body, info_key, (size_t)info_n) != 0) return DECLINED;
    Parser P;
    init_parser(&P, S, body + info_n, stop - 2, limit);
    P.depth = 2; /* inside the line's object and its payload */
    Val info;
    if (P.p >= P.end || !parse_value(&P, &info, X_INFO)) return DECLINED;
    if (P.end - P.p < limits_n || memcmp(P.p, limits_key, (size_t)limits_n) != 0) return DECLINED;
    P.p += limits_n;
    Val limits;
    if (P.p >= P.end || !parse_value(&P, &limits, X_SKIP) || P.p != P.end) return DECLINED;
    memset(out, 0, sizeof(Count));
    if (info.t != J_OBJ) {
        out->none = 1;
        return TAKEN;
    }
    if (P.model_keys) return DECLINED; /* the scan reads the model through values.usage_model */
    out->has[0] = usage_counts(&P.total, P.counts[0], out->counts[0]);
    out->has[1] = usage_counts(&P.last, P.counts[1], out->counts[1]);
    if (out->has[0] < 0 || out->has[1] < 0) return DECLINED;
    out->window = P.window.t == J_INT && P.window.i > 0 ? P.window.i : -1;
    return TAKEN;
}

/* A token_count line: a count read anew, or a repeat of the last one (same bytes after the
 * timestamp: read once, as scan.scan reads it). */
static int token_count(Scratch *S, Recs *R, Run *run, const uint8_t *data, Py_ssize_t number, const uint8_t *stamp,
                       Py_ssize_t cut, Py_ssize_t stop, const uint8_t *limit) {
    Py_ssize_t size = stop - cut;
    int repeat = run->last_start >= 0 && run->last_end - run->last_start == size &&
                 memcmp(data + run->last_start, data + cut, (size_t)size) == 0;
    Rec *r = new_rec(R, repeat ? R_REPEAT : R_COUNT, number);
    if (!r) return FAILED;
    r->a = stamp - data;
    if (!repeat) {
        int got = read_count(S, data + cut, data + stop, limit, &r->count);
        if (got != TAKEN) {
            R->n--;
            return got;
        }
        run->last_start = cut;
        run->last_end = stop;
    }
    return TAKEN;
}

/* A string field measured as text: its tokens, or -1 (declined). */
static long long text_tokens(const Val *v) {
    if (v->t != J_STR || past_cjk(v)) return -1;
    return tokens_of(v->m.units, v->m.cjk);
}

static int add_item(Recs *R, Py_ssize_t number, int bucket, long long tokens) {
    Rec *r = new_rec(R, R_ITEM, number);
    if (!r) return FAILED;
    r->code = bucket;
    r->a = (Py_ssize_t)tokens;
    return TAKEN;
}

static int add_mark(Recs *R, Py_ssize_t number, int code) {
    Rec *r = new_rec(R, R_MARK, number);
    if (!r) return FAILED;
    r->code = code;
    return TAKEN;
}

/* A response item scan.scan parses: TAKEN, DECLINED or FAILED. */
static int response_item(Recs *R, Parser *P, const uint8_t *ptype, const uint8_t *ptype_end, Py_ssize_t number) {
    if (!parse_line(P) || P->payload.t != J_OBJ) return DECLINED;
    if (is(ptype, ptype_end, "function_call_output") || is(ptype, ptype_end, "custom_tool_call_output")) {
        long long tokens = text_tokens(&P->output);
        if (tokens < 0) return DECLINED;
        return add_item(R, number, B_TOOL, tokens);
    }
    if (is(ptype, ptype_end, "function_call") || is(ptype, ptype_end, "custom_tool_call")) {
        const Val *name = &P->name, *arguments = ptype_end - ptype == 13 ? &P->arguments : &P->input;
        if (name->t != J_STR || arguments->t != J_STR || past_cjk(name) || past_cjk(arguments)) return DECLINED;
        /* "name arguments" */
        long long tokens = tokens_of(name->m.units + arguments->m.units + 1, name->m.cjk + arguments->m.cjk);
        return add_item(R, number, B_TOOL_CALLS, tokens);
    }
    int message = is(ptype, ptype_end, "message");
    if (message || is(ptype, ptype_end, "agent_message")) {
        int bucket = B_USER; /* an agent message: another agent's, received */
        int user = 0;
        if (message) {
            const Val *role = &P->role;
            bucket = B_ASSISTANT;
            if (role->t == J_STR) {
                if (role->escaped) return DECLINED;
                if (is(role->s, role->e, "user")) {
                    bucket = B_USER;
                    user = 1;
                } else if (is(role->s, role->e, "system") || is(role->s, role->e, "developer")) {
                    bucket = B_SYSTEM;
                }
            }
        }
        const Val *content = &P->content;
        Measure text = {0, 0, 1};
        const Val *first = NULL;
        if (content->t == J_STR) {
            if (past_cjk(content)) return DECLINED;
            text = content->m;
            first = content;
        } else if (content->t == J_ARR) {
            if (P->past) return DECLINED;
            text = P->joined;
            if (P->parts) first = &P->first_text;
        } else if (content->t == J_OBJ) {
            return DECLINED;
        }
        if (add_item(R, number, bucket, tokens_of(text.units, text.cjk)) != TAKEN) return FAILED;
        if (user) {
            /* a prompt before user_message, unless injected context (turns.INJECTED_PREFIXES) */
            int injected = first != NULL && (decoded_starts(first, "<") || decoded_starts(first, "# AGENTS.md"));
            if (!injected) return add_mark(R, number, M_LEGACY);
        }
        return TAKEN;
    }
    if (is(ptype, ptype_end, "local_shell_call") || is(ptype, ptype_end, "web_search_call") ||
        is(ptype, ptype_end, "tool_search_call") || is(ptype, ptype_end, "tool_search_output"))
        return DECLINED; /* measured from JSON values (values.dumped) */
    return TAKEN;        /* an item measured by nothing */
}

/* A compacted line: the items of its replacement history (a list), else of its message (a
 * user item, when a non-empty string), and its mark; DECLINED when an entry or the message is
 * one the loop does not measure. */
static int compacted(Recs *R, Parser *P, Py_ssize_t number) {
    P->compacted = 1;
    if (!parse_line(P) || P->payload.t != J_OBJ) return DECLINED;
    if (P->history_state & FAILED_ENTRY) return FAILED;
    if (P->history.t == J_ARR) {
        if (P->history_state) return DECLINED;
        Scratch *S = P->scratch;
        for (Py_ssize_t k = 0; k < S->entries_len; k++)
            if (add_item(R, number, S->entries[k].bucket, S->entries[k].tokens) != TAKEN) return FAILED;
    } else if (P->message.t == J_STR && P->message.s != P->message.e) {
        long long tokens = text_tokens(&P->message);
        if (tokens < 0) return DECLINED;
        if (add_item(R, number, B_USER, tokens) != TAKEN) return FAILED;
    }
    return add_mark(R, number, M_COMPACTED);
}

/* One line, data[start:stop] (stop: its closing brace's end): TAKEN, DECLINED or FAILED. */
static int scan_line(Scratch *S, Recs *R, Run *run, const uint8_t *data, Py_ssize_t start, Py_ssize_t stop,
                     const uint8_t *limit, Py_ssize_t number) {
    static const char head[] = "{\"timestamp\":\"", type_key[] = "\",\"type\":\"", payload_key[] = "\",\"payload\":",
                      ptype_key[] = "{\"type\":\"";
    const uint8_t *p = data + start, *end = data + stop;
    if (!starts(p, end, head)) return DECLINED;
    const uint8_t *stamp = p + sizeof(head) - 1;
    if (!codex_stamp(stamp, end)) return DECLINED;
    p = stamp + STAMP_SIZE;
    if (!starts(p, end, type_key)) return DECLINED;
    const uint8_t *kind = p + sizeof(type_key) - 1, *kind_end = word(kind, end);
    if (!kind_end || !starts(kind_end, end, payload_key)) return DECLINED;
    p = kind_end + sizeof(payload_key) - 1;
    const uint8_t *ptype = NULL, *ptype_end = NULL;
    if (starts(p, end, ptype_key)) {
        ptype = p + sizeof(ptype_key) - 1;
        ptype_end = word(ptype, end);
    }
    Py_ssize_t cut = ptype_end ? ptype_end + 1 - data : -1; /* after the payload type's closing quote */
    Parser P;
    init_parser(&P, S, data + start, end, limit);
    int got = TAKEN;
    if (is(kind, kind_end, "response_item")) {
        if (!ptype_end) return DECLINED;
        if (is(ptype, ptype_end, "reasoning") || is(ptype, ptype_end, "ghost_snapshot") ||
            is(ptype, ptype_end, "image_generation_call") || is(ptype, ptype_end, "compaction"))
            got = TAKEN; /* decode.UNMEASURED_ITEMS: not parsed */
        else
            got = response_item(R, &P, ptype, ptype_end, number);
    } else if (is(kind, kind_end, "event_msg")) {
        if (!ptype_end) return DECLINED;
        if (is(ptype, ptype_end, "token_count")) {
            if (run->in_burst) return DECLINED;
            got = token_count(S, R, run, data, number, stamp, cut, stop, limit);
        } else if (is(ptype, ptype_end, "user_message")) {
            if (!parse_line(&P) || P.payload.t != J_OBJ) return DECLINED;
            got = add_mark(R, number, M_PROMPT);
        } else if (is(ptype, ptype_end, "context_compacted")) {
            got = add_mark(R, number, M_COMPACT_EVENT);
        } else if (is(ptype, ptype_end, "thread_settings_applied")) {
            return DECLINED;
        }
    } else if (is(kind, kind_end, "turn_context")) {
        if (!parse_line(&P) || P.payload.t != J_OBJ) return DECLINED;
        const Val *model = &P.model;
        if (model->t == J_STR) {
            if (model->escaped || !model->m.ascii) return DECLINED; /* str.strip() of other text: Python's */
            const uint8_t *s = model->s, *e = model->e;
            while (s < e && *s == ' ') s++;
            while (e > s && e[-1] == ' ') e--;
            if (e > s) {
                Rec *r = new_rec(R, R_SETTING, number);
                if (!r) return FAILED;
                r->a = s - data;
                r->b = e - data;
            }
        }
    } else if (is(kind, kind_end, "compacted")) {
        got = compacted(R, &P, number);
    } else if (is(kind, kind_end, "session_meta")) {
        return DECLINED;
    }
    if (got != TAKEN) return got;
    Py_ssize_t at = stamp - data;
    run->lines++;
    run->last_line = number;
    if (run->min < 0 || memcmp(data + at, data + run->min, STAMP_SIZE) < 0) run->min = at;
    if (run->max < 0 || memcmp(data + at, data + run->max, STAMP_SIZE) > 0) run->max = at;
    return TAKEN;
}

/* --- The rows, made with the GIL held ----------------------------------------------------- */

/* Append a new tuple of n items (references stolen; NULL items: fails, releasing the others). */
static int append_tuple(PyObject *list, Py_ssize_t n, PyObject **items) {
    PyObject *tuple = PyTuple_New(n);
    int ok = tuple != NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (!items[k]) ok = 0;
    }
    if (!ok) {
        for (Py_ssize_t k = 0; k < n; k++) Py_XDECREF(items[k]);
        Py_XDECREF(tuple);
        return 0;
    }
    for (Py_ssize_t k = 0; k < n; k++) PyTuple_SET_ITEM(tuple, k, items[k]);
    ok = PyList_Append(list, tuple) == 0;
    Py_DECREF(tuple);
    return ok;
}

/* settings: (line, model, None, False) */
static int setting_row(PyObject *settings, Py_ssize_t number, PyObject *model) {
    PyObject *row[4] = {PyLong_FromSsize_t(number), Py_NewRef(model), Py_NewRef(Py_None), Py_NewRef(Py_False)};
    return append_tuple(settings, 4, row);
}

/* A count's numbers as a packed usage row has them (after its line). */
static void count_numbers(const Count *c, int64_t out[COUNT_NUMBERS]) {
    Py_ssize_t at = 0;
    for (int u = 0; u < 2; u++) {
        out[at++] = c->has[u];
        for (int k = 0; k < 6; k++) out[at++] = c->has[u] ? (int64_t)c->counts[u][k] : NULL_COUNT;
    }
    out[at] = c->window >= 0 ? (int64_t)c->window : NULL_COUNT;
}

/* The last count's values as scan._count_of_body gives them: None, or a 16-tuple (a new reference). */
static PyObject *count_values(const Run *run) {
    if (run->last_none) return Py_NewRef(Py_None);
    PyObject *tuple = PyTuple_New(COUNT_NUMBERS + 1);
    if (!tuple) return NULL;
    for (Py_ssize_t k = 0; k < COUNT_NUMBERS; k++) {
        int64_t v = run->last[k];
        PyObject *item = (k == 0 || k == 7) ? Py_NewRef(v ? Py_True : Py_False)
                         : v == NULL_COUNT ? Py_NewRef(Py_None)
                                           : PyLong_FromLongLong((long long)v);
        if (!item) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, k, item);
    }
    PyTuple_SET_ITEM(tuple, COUNT_NUMBERS, Py_NewRef(run->last_model));
    return tuple;
}

/* The state's last values (None, or a 16-tuple scan.scan made) as numbers: 1, or 0 with an
 * exception set. */
static int read_values(PyObject *values, Run *run) {
    run->last_model = Py_NewRef(Py_None);
    run->last_none = values == Py_None;
    if (run->last_none) return 1;
    if (!PyTuple_CheckExact(values) || PyTuple_GET_SIZE(values) != COUNT_NUMBERS + 1) {
        PyErr_SetString(PyExc_TypeError, "scan_lines: the last count's values are not a 16-tuple or None");
        return 0;
    }
    for (Py_ssize_t k = 0; k < COUNT_NUMBERS; k++) {
        PyObject *item = PyTuple_GET_ITEM(values, k);
        if (item == Py_None) {
            run->last[k] = NULL_COUNT;
            continue;
        }
        long long v = PyLong_AsLongLong(item);
        if (v == -1 && PyErr_Occurred()) return 0;
        if (v == NULL_COUNT) {
            PyErr_SetString(PyExc_ValueError, "scan_lines: a count of the last values is the null mark");
            return 0;
        }
        run->last[k] = (int64_t)v;
    }
    Py_SETREF(run->last_model, Py_NewRef(PyTuple_GET_ITEM(values, COUNT_NUMBERS)));
    return 1;
}

/* What scan.scan does with a count's values (the last ones read): its usage row, appended to
 * the packed usage rows with its timestamp and model (left out for a repeat with a total: it
 * changes nothing), and its model. 1, or 0 with an exception set. */
static int count_rows(PyObject *sink, Run *run, const uint8_t *data, const Rec *r) {
    if (run->last_none) return 1;
    if (!(r->kind == R_REPEAT && run->last[0])) {
        PyObject *usage = PyTuple_GET_ITEM(sink, SINK_USAGE);
        Py_ssize_t at = PyByteArray_GET_SIZE(usage);
        int64_t row[COUNT_NUMBERS + 1];
        row[0] = (int64_t)r->number;
        memcpy(row + 1, run->last, sizeof(run->last));
        if (PyByteArray_Resize(usage, at + (Py_ssize_t)sizeof(row)) < 0) return 0;
        memcpy(PyByteArray_AS_STRING(usage) + at, row, sizeof(row));
        PyObject *text = ascii_str((const char *)data + r->a, STAMP_SIZE);
        int ok = text != NULL && PyList_Append(PyTuple_GET_ITEM(sink, SINK_STAMPS), text) == 0 &&
                 PyList_Append(PyTuple_GET_ITEM(sink, SINK_MODELS), run->last_model) == 0;
        Py_XDECREF(text);
        if (!ok) return 0;
    }
    return run->last_model == Py_None || setting_row(PyTuple_GET_ITEM(sink, SINK_SETTINGS), r->number, run->last_model);
}

/* The rows of the records, appended to the sink's lists in line order: 1, or 0 with an
 * exception set. */
static int emit(PyObject *sink, Run *run, const Recs *R, const uint8_t *data) {
    /* The items, packed: (line, bucket, tokens) as three int64 each (item_sums reads them). */
    PyObject *packed = PyTuple_GET_ITEM(sink, SINK_ITEMS);
    Py_ssize_t items = 0;
    for (Py_ssize_t k = 0; k < R->n; k++) items += R->rec[k].kind == R_ITEM;
    Py_ssize_t at = PyByteArray_GET_SIZE(packed);
    if (items && PyByteArray_Resize(packed, at + items * ITEM_BYTES) < 0) return 0;
    for (Py_ssize_t k = 0; k < R->n; k++) {
        const Rec *r = &R->rec[k];
        int ok;
        switch (r->kind) {
        case R_ITEM: {
            int64_t item[3] = {(int64_t)r->number, (int64_t)r->code, (int64_t)r->a};
            memcpy(PyByteArray_AS_STRING(packed) + at, item, ITEM_BYTES);
            at += ITEM_BYTES;
            ok = 1;
            break;
        }
        case R_MARK: { /* marks: (line, code) */
            PyObject *row[2] = {PyLong_FromSsize_t(r->number), PyLong_FromLong(r->code)};
            ok = append_tuple(PyTuple_GET_ITEM(sink, SINK_MARKS), 2, row);
            break;
        }
        case R_SETTING: {
            PyObject *name = ascii_str((const char *)data + r->a, r->b - r->a);
            ok = name != NULL && setting_row(PyTuple_GET_ITEM(sink, SINK_SETTINGS), r->number, name);
            Py_XDECREF(name);
            break;
        }
        case R_COUNT:
            run->last_none = r->count.none;
            if (!run->last_none) count_numbers(&r->count, run->last);
            Py_SETREF(run->last_model, Py_NewRef(Py_None)); /* a count the loop reads names none */
            run->last_fresh = 1;
            ok = count_rows(sink, run, data, r);
            break;
        default: /* R_REPEAT */
            ok = count_rows(sink, run, data, r);
            break;
        }
        if (!ok) return 0;
    }
    return 1;
}

static int read_state(PyObject *state, Run *run) {
    Py_ssize_t *slots[] = {&run->lines, &run->last_line, &run->min, &run->max, &run->last_start, &run->last_end};
    for (int k = 0; k < 6; k++)
        if (!ssize_arg(PyList_GET_ITEM(state, k), slots[k])) return 0;
    run->in_burst = PyObject_IsTrue(PyList_GET_ITEM(state, ST_IN_BURST));
    if (run->in_burst < 0) return 0;
    run->last_values = Py_NewRef(PyList_GET_ITEM(state, ST_LAST_VALUES));
    run->last_fresh = 0;
    return read_values(run->last_values, run);
}

static int write_state(PyObject *state, Run *run) {
    Py_ssize_t values[] = {run->lines, run->last_line, run->min, run->max, run->last_start, run->last_end};
    for (int k = 0; k < 6; k++) {
        PyObject *value = PyLong_FromSsize_t(values[k]);
        if (!value || PyList_SetItem(state, k, value) < 0) return 0;
    }
    if (run->last_fresh) {
        PyObject *values = count_values(run);
        if (!values) return 0;
        Py_SETREF(run->last_values, values);
    }
    return PyList_SetItem(state, ST_LAST_VALUES, Py_NewRef(run->last_values)) == 0;
}

enum { AT_END = 0, AT_DECLINED, AT_FLUSH, AT_FAILED };

/* With release, the pages of data before offset `to` are handed back (MADV_DONTNEED) once 32 MiB
 * have been read past the last release: data is then a shared mapping of a file, so its pages
 * stay in the page cache, and reading them again (a timestamp or count kept by offset) maps them
 * again; the process's memory no longer grows with a rollout's size. */
#define RELEASE_BYTES (32 * 1024 * 1024)

static void release_pages(const uint8_t *data, Py_ssize_t *released, Py_ssize_t to) {
#if defined(MADV_DONTNEED) && (defined(__unix__) || defined(__APPLE__))
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || to - *released < RELEASE_BYTES) return;
    uintptr_t from = ((uintptr_t)(data + *released) + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t until = (uintptr_t)(data + to) & ~((uintptr_t)page - 1);
    if (until > from) (void)madvise((void *)from, (size_t)(until - from), MADV_DONTNEED);
    *released = to;
#else
    (void)data;
    (void)released;
    (void)to;
#endif
}

static PyObject *scan_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs < 5 || nargs > 6 || !PyTuple_CheckExact(args[3]) || PyTuple_GET_SIZE(args[3]) != SINK_SIZE ||
        !PyList_CheckExact(args[4]) || PyList_GET_SIZE(args[4]) != ST_SIZE) {
        PyErr_SetString(PyExc_TypeError,
                        "scan_lines(raw, start, number, (usage, stamps, models, settings, items, marks), state, release=False)");
        return NULL;
    }
    int release = nargs == 6 ? PyObject_IsTrue(args[5]) : 0;
    if (release < 0) return NULL;
    PyObject *sink = args[3], *state = args[4];
    int shaped = PyByteArray_CheckExact(PyTuple_GET_ITEM(sink, SINK_USAGE)) &&
                 PyList_CheckExact(PyTuple_GET_ITEM(sink, SINK_STAMPS)) &&
                 PyList_CheckExact(PyTuple_GET_ITEM(sink, SINK_MODELS)) &&
                 PyList_CheckExact(PyTuple_GET_ITEM(sink, SINK_SETTINGS)) &&
                 PyByteArray_CheckExact(PyTuple_GET_ITEM(sink, SINK_ITEMS)) &&
                 PyList_CheckExact(PyTuple_GET_ITEM(sink, SINK_MARKS));
    if (!shaped) {
        PyErr_SetString(PyExc_TypeError, "scan_lines: the sink holds a bytearray, three lists, a bytearray and a list");
        return NULL;
    }
    Py_ssize_t start, number;
    if (!ssize_arg(args[1], &start) || !ssize_arg(args[2], &number)) return NULL;
    Run run;
    run.last_values = run.last_model = NULL;
    if (!read_state(state, &run)) {
        Py_XDECREF(run.last_values);
        Py_XDECREF(run.last_model);
        return NULL;
    }
    Data d;
    if (!data_of(args[0], &d)) {
        Py_DECREF(run.last_values);
        Py_DECREF(run.last_model);
        return NULL;
    }
    PyObject *result = NULL;
    Scratch S;
    memset(&S, 0, sizeof(S));
    Recs R = {NULL, 0, 0};
    if (start < 0 || number < 0 || number > PY_SSIZE_T_MAX - d.size - 1 || run.min < -1 || run.max < -1 ||
        (run.min >= 0 && run.min > d.size - STAMP_SIZE) || (run.max >= 0 && run.max > d.size - STAMP_SIZE) ||
        (run.min < 0) != (run.max < 0) || run.last_start < -1 || run.last_end > d.size ||
        run.last_start > run.last_end || (run.last_start < 0) != (run.last_end < 0)) {
        PyErr_SetString(PyExc_ValueError, "scan_lines: bad offsets or line number for the data");
        goto done;
    }
    const uint8_t *data = d.data, *limit = data + d.size;
    Py_ssize_t stop = 0, released = start;
    for (;;) {
        int at = AT_END;
        R.n = 0;
        /* The data is a bytes object or a buffer this call holds: it stays as it is. */
        Py_BEGIN_ALLOW_THREADS
        while (start < d.size) {
            if (R.n >= FLUSH_AT) {
                at = AT_FLUSH;
                break;
            }
            const uint8_t *p = data + start;
            stop = line_end(p, limit) - data;
            number++;
            if (stop == start) { /* an empty line */
                start = stop + 1;
                continue;
            }
            int got = data[stop - 1] == '}' ? scan_line(&S, &R, &run, data, start, stop, limit, number) : DECLINED;
            if (got != TAKEN) {
                at = got == FAILED ? AT_FAILED : AT_DECLINED;
                break;
            }
            start = stop + 1;
            if (release) release_pages(data, &released, start);
        }
        Py_END_ALLOW_THREADS
        if (!emit(sink, &run, &R, data)) goto done;
        if (at == AT_FAILED) {
            PyErr_NoMemory();
            goto done;
        }
        if (at == AT_DECLINED) {
            result = Py_BuildValue("(nnn)", start, stop, number);
            break;
        }
        if (at == AT_END) {
            result = Py_NewRef(Py_None);
            break;
        }
    }
done:
    if (result && !write_state(state, &run)) Py_CLEAR(result);
    Py_DECREF(run.last_values);
    Py_DECREF(run.last_model);
    PyMem_RawFree(R.rec);
    PyMem_RawFree(S.keys);
    PyMem_RawFree(S.text);
    PyMem_RawFree(S.levels);
    PyMem_RawFree(S.entries);
    data_release(&d);
    return result;
}

/* item_sums(items, start, end, since): what scan._sums adds up of packed items (see emit) */
static PyObject *item_sums(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    Py_ssize_t start, end, since;
    if (nargs != 4 || !ssize_arg(args[1], &start) || !ssize_arg(args[2], &end) || !ssize_arg(args[3], &since)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "item_sums(items, start, end, since)");
        return NULL;
    }
    Data d;
    if (!data_of(args[0], &d)) return NULL;
    if (d.size % ITEM_BYTES != 0) {
        data_release(&d);
        PyErr_SetString(PyExc_ValueError, "item_sums: the items are not whole (line, bucket, tokens) records");
        return NULL;
    }
    long long sums[B_TOOL_CALLS + 1] = {0}, context = 0, messages = 0;
    int bad = 0;
    for (Py_ssize_t at = 0; at < d.size; at += ITEM_BYTES) {
        int64_t item[3];
        memcpy(item, d.data + at, ITEM_BYTES);
        if (item[1] < 0 || item[1] > B_TOOL_CALLS) {
            bad = 1;
            break;
        }
        if (item[0] >= since) { /* in the context: at or after the last compaction */
            context += item[2];
            messages++;
        }
        if (!(end && start <= item[0] && item[0] <= end)) sums[item[1]] += item[2]; /* not replayed */
    }
    data_release(&d);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "item_sums: an item's bucket is not one of the five");
        return NULL;
    }
    return Py_BuildValue("(LLLLLLL)", sums[0], sums[1], sums[2], sums[3], sums[4], context, messages);
}

/* --- The module ---------------------------------------------------------------------------- */

static PyMethodDef scan_methods[] = {
    {"scan_lines", (PyCFunction)(void (*)(void))scan_lines, METH_FASTCALL,
     "scan_lines(raw, start, number, sink, state, release=False) -> (start, end, number) | None\n\n"
     "scan.scan's loop over the clean lines of raw from offset start (the line after line\n"
     "`number`), appending to its sink (usage, stamps, models, settings, items, marks) and keeping its\n"
     "state (see the module's source); returns the span and number of the first line Python\n"
     "must read, or None at the end of the data. release: raw is a shared mapping of a file,\n"
     "whose pages already read are handed back as it goes (MADV_DONTNEED)."},
    {"item_sums", (PyCFunction)(void (*)(void))item_sums, METH_FASTCALL,
     "item_sums(items, start, end, since) -> (system, user, assistant, tool, tool_calls, context, messages)\n\n"
     "The sums scan._sums makes of the items scan_lines packed: each bucket's tokens but those of\n"
     "lines start..end (a fork's replay; end 0: none), and the tokens and count of the items at or\n"
     "after line since (the context)."},
    {NULL, NULL, 0, NULL},
};

static int scan_exec(PyObject *module) {
    if (PyModule_AddIntConstant(module, "MAX_DEPTH", MAX_DEPTH) < 0 ||
        PyModule_AddStringConstant(module, "DUPLICATE_KEYS", DUPLICATE_KEYS) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot scan_slots[] = {
    {Py_mod_exec, (void *)scan_exec},
#ifdef Py_mod_multiple_interpreters /* 3.12: nothing is shared between module objects */
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil /* 3.13: the rows are appended to lists the caller owns, with the GIL held */
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_scan",
    .m_doc = "The Codex lean scan's loop over clean lines, in C (see scan.py).",
    .m_size = 0, /* it holds nothing: each call's buffers are its own */
    .m_methods = scan_methods,
    .m_slots = scan_slots,
};

PyMODINIT_FUNC PyInit__scan(void) { return PyModuleDef_Init(&scan_module); }
