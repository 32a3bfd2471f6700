/* A line skimmer for the Claude Code walker (cc_analytics/frames/claude/decode.py).
 *
 * skim(raw, start, end, row, flags) reads the bytes raw[start:end] as one strict JSON line in a
 * single pass (full validation: UTF-8, escapes, numbers, nesting) and picks the fields the walker
 * reads. It returns a flat tuple of exactly what the walker would append for that line, or None:
 * "decline, let the Python walker read this line". It declines every line on which a walker rule
 * fires (a problem row, a fallback, a field of an unexpected type) and every line with a
 * subtlety it does not handle itself (an escaped key, an integer beyond 64 bits, a float or a
 * non-boolean flag where a field is read, a repeated key inside a tool input, ...). The rules
 * live in Python; this only accepts the lines on which none fires.
 *
 * It reads a line as the JSON line policy does (cc_analytics/jsonline.py; a test holds the two
 * constants equal, exposed here as MAX_DEPTH and DUPLICATE_KEYS): nesting up to MAX_DEPTH levels,
 * validated with an explicit stack rather than recursion wherever no field is read (skip_value),
 * so any thread's stack holds it; and where a key repeats, the first occurrence of a field it
 * reads wins (a later one is validated and skipped). Keys that repeat where no field is read
 * change nothing it keeps, except inside a tool input, whose text then is not what orjson
 * writes of it (the last wins there): such a line is declined.
 *
 * flags: 1 = identity (uuid, session id, agent id), 2 = blocks (measure content blocks), 8 = marks
 * (with blocks: what the findings read of each block besides its tokens: a tool call's id and
 * its input's JSON text, a tool result's tool_use_id, whether a prompt names "CLAUDE.md").
 *
 * The tuple (see _walk): kind, subtype, timestamp (its microseconds since 1970 when in Claude Code's
 * own form, see stamp_micros; else its text), cwd, version, model, message id, request id,
 * has_envelope, is_sidechain, is_meta, is_compact_summary, is_api_error, has_interrupted_id,
 * the four usage counts, prompt, compact trigger, compact pre-tokens, uuid, session id,
 * agent id (None: not a string), pricing ((row, 5m, 1h, web searches, tier, speed) or None),
 * blocks ((rows, kinds, names, is_error, tokens) or None; with marks, then ids, memory, inputs).
 *
 * skim_lines(raw, start, number, sink, state) is the walker's loop over a file: from offset start
 * (the line after line `number`), it cuts lines on LF, skips empty ones, skims each line that
 * starts with "{" and appends what it keeps to the walker's lists (sink), keeping cwd only on
 * the first line of the file that has one and version only where it changes (state: [want cwd,
 * last version], read and updated). It stops at the first line it cannot take (declined, or not
 * starting with "{", whitespace-only lines included) and returns that line's (start, end,
 * number) for the Python walker, which then calls it again from the next line; at the end of the
 * data, the number of its last LF-separated segment (an int: where a piece of a file read in
 * pieces leaves the line count). A file of clean lines is one call.
 *
 * A column of the sink may be a Column (below) instead of a list: the typed columns the batch
 * profiles keep, Arrow buffers that Polars takes through the Arrow PyCapsule interface. The
 * line's strings and flags, and its blocks, are then written to them as the line is skimmed,
 * without a Python object each.
 *
 * Strings are scanned 16 bytes at a time with SSE2 where the compiler targets it (x86-64), with
 * a portable 8-byte fallback (also forced by defining SKIM_PORTABLE); every byte is validated.
 *
 * The module initialises in phases (PEP 489) and keeps everything it holds in its module state
 * (SkimState: the Column type, interned strings, scratch buffers), nothing in static variables,
 * so each interpreter that imports it has its own. The scratch buffers are never read after a
 * call that can run Python code (an allocation that collects garbage, a comparison).
 *
 * The JSON primitives (strings, numbers, literals, values skipped without recursion, UTF-8, the
 * text estimate) are shared with the other formats' extensions: ../_jsonscan.h and
 * ../_jsonscan_parse.h.
 *
 * Plain C99 and the CPython C API (3.11 and later).
 */
#include "../_jsonscan.h"

#define RESULT_SIZE 26

/* Where a value sits: decides which keys of an object (or elements of an array) are picked. */
typedef enum {
    C_SKIP = 0,
    C_TOP,      /* the line's object */
    C_MESSAGE,  /* top.message */
    C_CONTENT,  /* top.message.content (array of blocks) */
    C_BLOCK,    /* one block of that array */
    C_RESULTS,  /* block.content (array of tool result items) */
    C_ITEM,     /* one tool result item */
    C_USAGE,    /* message.usage */
    C_CREATION, /* usage.cache_creation */
    C_SERVER,   /* usage.server_tool_use */
    C_ATTACH,   /* top.attachment */
    C_COMPACT   /* top.compactMetadata */
} Ctx;

typedef struct {
    Val type, text, thinking, name, input, content, is_error, id, tool_use_id;
    const uint8_t *input_s, *input_e; /* the input's JSON text */
    int input_canonical; /* that text is what orjson.dumps writes of the input */
    int item_bad;        /* a tool result item with an escaped "type" */
    Measure results;     /* the joined text of the tool result items */
} Block;

/* Scratch space kept between calls, in the module state (the GIL is held throughout): the blocks
 * of the line being skimmed, the key stack of its objects, the text of an unescaped string, the
 * open containers of a value skipped without recursion. */
typedef struct {
    Block *blocks;
    Py_ssize_t blocks_cap, blocks_len;
    Span *keys;
    Py_ssize_t keys_cap, keys_len;
    char *text;
    Py_ssize_t text_cap;
    Level *levels;
    Py_ssize_t levels_cap;
} Scratch;

typedef struct {
    const uint8_t *p, *end;
    const uint8_t *limit; /* the end of the data: bytes up to it may be read past end */
    int depth;
    int canonical_depth; /* > 0 inside a tool_use input */
    int canonical;
    int fail;
    /* top level */
    Val type, uuid, session, stamp, cwd, version, request, sidechain, meta, summary, api_error, interrupted, agent,
        message, subtype, content, compact, attachment;
    /* message */
    Val model, id, mcontent, usage;
    int content_not_object; /* elements of message.content that are not objects */
    /* usage */
    Val counts[4], creation, server, tier, speed, five, hour, searches;
    /* attachment, compact metadata */
    Val attach_type, attach_prompt, trigger, pre;
    /* tool result item being read */
    Val item_type, item_text;
    Block *block; /* the block being read */
    Scratch *scratch;
} Parser;

/* The module state: what each module object (one per interpreter) holds. */
typedef struct {
    PyTypeObject *column_type;
    /* block kinds, and the common line types (interned: one object for every line) */
    PyObject *k_prompt, *k_text, *k_thinking, *k_tool_use, *k_tool_result, *k_system;
    PyObject *s_user, *s_assistant, *s_system, *s_attachment;
    Scratch scratch;
} SkimState;

static struct PyModuleDef skim_module;

static inline SkimState *state_of(PyObject *module) { return (SkimState *)PyModule_GetState(module); }

static int parse_value(Parser *P, Val *out, Ctx ctx);

#include "../_jsonscan_parse.h"

/* --- Objects and arrays ------------------------------------------------------------------- */

#define KEY(lit) (n == (Py_ssize_t)sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)

/* Where the value of key k goes in context ctx (NULL: nowhere), and its own context. */
static Val *target(Parser *P, Ctx ctx, const uint8_t *k, Py_ssize_t n, Ctx *sub) {
    *sub = C_SKIP;
    switch (ctx) {
    case C_TOP:
        switch (n) {
        case 4:
            if (KEY("type")) return &P->type;
            if (KEY("uuid")) return &P->uuid;
            return NULL;
        case 3:
            return KEY("cwd") ? &P->cwd : NULL;
        case 6:
            return KEY("isMeta") ? &P->meta : NULL;
        case 7:
            if (KEY("version")) return &P->version;
            if (KEY("agentId")) return &P->agent;
            if (KEY("message")) {
                *sub = C_MESSAGE;
                return &P->message;
            }
            if (KEY("subtype")) return &P->subtype;
            if (KEY("content")) return &P->content;
            return NULL;
        case 9:
            if (KEY("sessionId")) return &P->session;
            if (KEY("timestamp")) return &P->stamp;
            if (KEY("requestId")) return &P->request;
            return NULL;
        case 10:
            if (KEY("attachment")) {
                *sub = C_ATTACH;
                return &P->attachment;
            }
            return NULL;
        case 11:
            return KEY("isSidechain") ? &P->sidechain : NULL;
        case 15:
            if (KEY("compactMetadata")) {
                *sub = C_COMPACT;
                return &P->compact;
            }
            return NULL;
        case 16:
            return KEY("isCompactSummary") ? &P->summary : NULL;
        case 17:
            return KEY("isApiErrorMessage") ? &P->api_error : NULL;
        case 20:
            return KEY("interruptedMessageId") ? &P->interrupted : NULL;
        default:
            return NULL;
        }
    case C_MESSAGE:
        if (KEY("model")) return &P->model;
        if (KEY("id")) return &P->id;
        if (KEY("content")) {
            *sub = C_CONTENT;
            return &P->mcontent;
        }
        if (KEY("usage")) {
            *sub = C_USAGE;
            return &P->usage;
        }
        return NULL;
    case C_BLOCK: {
        Block *b = P->block;
        if (KEY("type")) return &b->type;
        if (KEY("text")) return &b->text;
        if (KEY("thinking")) return &b->thinking;
        if (KEY("name")) return &b->name;
        if (KEY("input")) return &b->input;
        if (KEY("is_error")) return &b->is_error;
        if (KEY("id")) return &b->id;
        if (KEY("tool_use_id")) return &b->tool_use_id;
        if (KEY("content")) {
            *sub = C_RESULTS;
            return &b->content;
        }
        return NULL;
    }
    case C_ITEM:
        if (KEY("type")) return &P->item_type;
        if (KEY("text")) return &P->item_text;
        return NULL;
    case C_USAGE:
        if (KEY("input_tokens")) return &P->counts[0];
        if (KEY("cache_creation_input_tokens")) return &P->counts[1];
        if (KEY("cache_read_input_tokens")) return &P->counts[2];
        if (KEY("output_tokens")) return &P->counts[3];
        if (KEY("cache_creation")) {
            *sub = C_CREATION;
            return &P->creation;
        }
        if (KEY("server_tool_use")) {
            *sub = C_SERVER;
            return &P->server;
        }
        if (KEY("service_tier")) return &P->tier;
        if (KEY("speed")) return &P->speed;
        return NULL;
    case C_CREATION:
        if (KEY("ephemeral_5m_input_tokens")) return &P->five;
        if (KEY("ephemeral_1h_input_tokens")) return &P->hour;
        return NULL;
    case C_SERVER:
        return KEY("web_search_requests") ? &P->searches : NULL;
    case C_ATTACH:
        if (KEY("type")) return &P->attach_type;
        if (KEY("prompt")) return &P->attach_prompt;
        return NULL;
    case C_COMPACT:
        if (KEY("trigger")) return &P->trigger;
        if (KEY("preTokens")) return &P->pre;
        return NULL;
    default:
        return NULL;
    }
}

static Block *new_block(Scratch *S) {
    if (S->blocks_len == S->blocks_cap) {
        Py_ssize_t cap = S->blocks_cap ? S->blocks_cap * 2 : 64;
        Block *grown = PyMem_Realloc(S->blocks, (size_t)cap * sizeof(Block));
        if (!grown) return NULL;
        S->blocks = grown;
        S->blocks_cap = cap;
    }
    Block *b = &S->blocks[S->blocks_len++];
    memset(b, 0, sizeof(Block));
    b->results.ascii = 1;
    return b;
}

static int is_word(const Val *v, const char *word) {
    size_t n = strlen(word);
    return v->t == J_STR && !v->escaped && (size_t)(v->e - v->s) == n && memcmp(v->s, word, n) == 0;
}

/* An object some field is read from (ctx is not C_SKIP): each key's value goes to its slot, the
 * first occurrence of a key only (jsonline.DUPLICATE_KEYS); others are validated and skipped. */
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
            Ctx sub = C_SKIP;
            Val *slot = target(P, ctx, key.s, key.e - key.s, &sub);
            if (slot != NULL && slot->t != J_ABSENT) { /* a repeated key: the first one was read */
                slot = NULL;
                sub = C_SKIP;
            }
            if (slot == NULL) slot = &scratch;
            if (slot == &P->block->input) {
                /* A tool input: is its span exactly what orjson.dumps writes of it? */
                int outer_depth = P->canonical_depth, outer = P->canonical;
                P->canonical_depth++;
                P->canonical = 1;
                P->block->input_s = P->p;
                if (!parse_value(P, slot, C_SKIP)) return 0;
                P->block->input_e = P->p;
                P->block->input_canonical = P->canonical;
                P->canonical_depth = outer_depth;
                P->canonical = outer && P->canonical;
            } else if (!parse_value(P, slot, sub)) {
                return 0;
            }
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

static int parse_array(Parser *P, Val *out, Ctx ctx) {
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
            if (ctx == C_CONTENT) {
                if (*P->p == '{') {
                    Block *b = new_block(P->scratch);
                    if (!b) return 0;
                    Block *outer = P->block;
                    P->block = b;
                    if (!parse_value(P, &scratch, C_BLOCK)) return 0;
                    P->block = outer;
                } else {
                    P->content_not_object++;
                    if (!parse_value(P, &scratch, C_SKIP)) return 0;
                }
            } else if (ctx == C_RESULTS && *P->p == '{') {
                memset(&P->item_type, 0, sizeof(Val));
                memset(&P->item_text, 0, sizeof(Val));
                if (!parse_value(P, &scratch, C_ITEM)) return 0;
                if (P->item_type.t == J_STR && P->item_type.escaped) P->block->item_bad = 1;
                else if (is_word(&P->item_type, "text") && P->item_text.t == J_STR) {
                    Measure *r = &P->block->results;
                    r->units += P->item_text.m.units;
                    r->cjk += P->item_text.m.cjk;
                    r->ascii = r->ascii && P->item_text.m.ascii;
                }
            } else if (!parse_value(P, &scratch, C_SKIP)) {
                return 0;
            }
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

/* The value at P->p (no whitespace before it). Objects and arrays take ctx when it is theirs;
 * the others are skipped (skip_value), so recursion is only as deep as the contexts nest. */
static int parse_value(Parser *P, Val *out, Ctx ctx) {
    switch (*P->p) {
    case '{':
    case '[': {
        int own = *P->p == '{' ? ctx == C_TOP || ctx == C_MESSAGE || ctx == C_BLOCK || ctx == C_ITEM ||
                                     ctx == C_USAGE || ctx == C_CREATION || ctx == C_SERVER || ctx == C_ATTACH ||
                                     ctx == C_COMPACT
                               : ctx == C_CONTENT || ctx == C_RESULTS;
        if (!own) return skip_value(P, out);
        if (++P->depth > MAX_DEPTH) return 0;
        int ok = *P->p == '{' ? parse_object(P, out, ctx) : parse_array(P, out, ctx);
        P->depth--;
        return ok;
    }
    case '"':
        return parse_string(P, out);
    case 't':
        return parse_literal(P, out, "true", 4, J_TRUE);
    case 'f':
        return parse_literal(P, out, "false", 5, J_FALSE);
    case 'n':
        return parse_literal(P, out, "null", 4, J_NULL);
    default:
        return parse_number(P, out);
    }
}

/* --- Python values ------------------------------------------------------------------------ */

/* The microseconds since 1970 of a timestamp in the one form Claude Code writes,
 * YYYY-MM-DDTHH:MM:SS with an optional fraction of 1 to 6 digits, then Z, naming a real day and
 * a time before a leap second; 0 with *ok = 0 for any other text (the walker's Polars parse
 * reads it, and decides what it means). */
static int64_t stamp_micros(const Val *v, int *ok) {
    *ok = 0;
    if (v->t != J_STR || v->escaped) return 0;
    const uint8_t *s = v->s;
    Py_ssize_t n = v->e - v->s;
    if (n < 20 || n > 27 || n == 21 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
        s[n - 1] != 'Z')
        return 0;
    static const int at[] = {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18};
    for (int k = 0; k < 14; k++)
        if (s[at[k]] < '0' || s[at[k]] > '9') return 0;
#define TWO(i) ((s[(i)] - '0') * 10 + (s[(i) + 1] - '0'))
    int year = TWO(0) * 100 + TWO(2), month = TWO(5), day = TWO(8), hour = TWO(11), minute = TWO(14),
        second = TWO(17);
#undef TWO
    int64_t micros = 0;
    if (n > 20) { /* ".f{1,6}" before the Z */
        if (s[19] != '.') return 0;
        int digits = 0;
        for (Py_ssize_t k = 20; k < n - 1; k++, digits++) {
            if (s[k] < '0' || s[k] > '9') return 0;
            micros = micros * 10 + (s[k] - '0');
        }
        for (; digits < 6; digits++) micros *= 10;
    }
    static const int days_in[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in[month - 1] + (month == 2 && leap) || hour > 23 ||
        minute > 59 || second > 59)
        return 0;
    /* Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days inverse). */
    int y = year - (month <= 2);
    int era = (y >= 0 ? y : y - 399) / 400;
    int yoe = y - era * 400;
    int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + doe - 719468;
    *ok = 1;
    return ((days * 86400 + hour * 3600 + minute * 60 + second) * 1000000) + micros;
}

/* A timestamp as the walker keeps it: its microseconds (an int) when in Claude Code's form, else its text. */
static PyObject *stamp_value(Scratch *S, const Val *v) {
    int ok;
    int64_t micros = stamp_micros(v, &ok);
    if (ok) return PyLong_FromLongLong(micros);
    return str_or_none(S, v);
}

static PyObject *kind_str(SkimState *st, const Val *v) {
    PyObject *known = NULL;
    if (is_word(v, "user")) known = st->s_user;
    else if (is_word(v, "assistant")) known = st->s_assistant;
    else if (is_word(v, "system")) known = st->s_system;
    else if (is_word(v, "attachment")) known = st->s_attachment;
    if (known) return Py_NewRef(known);
    return str_of(&st->scratch, v);
}

/* bool(value) of a field read with obj.get(): -1 where the skimmer declines to say. */
static int flag(const Val *v) {
    if (v->t == J_ABSENT || v->t == J_NULL || v->t == J_FALSE) return 0;
    if (v->t == J_TRUE) return 1;
    return -1;
}

/* An integer field of pricing: None/absent, or an Int64 integer; -1 where a problem would fire. */
static int optional_int(const Val *v, PyObject **out) {
    if (v->t == J_ABSENT || v->t == J_NULL) {
        Py_INCREF(Py_None);
        *out = Py_None;
        return 1;
    }
    if (v->t != J_INT) return 0;
    *out = PyLong_FromLongLong(v->i);
    return *out ? 1 : -1;
}

static int optional_str(Scratch *S, const Val *v, PyObject **out) {
    if (v->t == J_ABSENT || v->t == J_NULL) {
        Py_INCREF(Py_None);
        *out = Py_None;
        return 1;
    }
    if (v->t != J_STR) return 0;
    *out = str_of(S, v);
    return *out ? 1 : -1;
}

/* --- Columns: a typed, growable column the walker appends to (instead of a list) ----------- *
 *
 * Column("i64" | "bool" | "str") holds what pl.Series(values, dtype) would build from a list
 * of ints, bools or strs with None for null, as Arrow buffers: a validity bitmap, the values
 * (int64, one byte per bool, or UTF-8 bytes) and, for strings, int64 offsets. skim_lines
 * writes to it without a Python object per value reaching a list; the Python walker calls
 * append(value) for the lines it reads; Polars reads it through __arrow_c_array__ (a copy, bools
 * as bits), and state() / column_from_state() carry it to another process. */
enum { COL_I64 = 0, COL_BOOL = 1, COL_STR = 2 };

typedef struct {
    PyObject_HEAD
    int kind;
    Py_ssize_t length, nulls;
    char *data;
    Py_ssize_t data_len, data_cap;
    int64_t *offsets; /* COL_STR: length + 1 entries */
    Py_ssize_t offsets_cap;
    uint8_t *valid; /* bit i: row i is not null */
    Py_ssize_t valid_cap;
} Column;

static int grow(void **buffer, Py_ssize_t *cap, Py_ssize_t need, Py_ssize_t item) {
    if (need <= *cap) return 1;
    if (need > PY_SSIZE_T_MAX / 2 / item) {
        PyErr_NoMemory();
        return 0;
    }
    Py_ssize_t size = *cap ? *cap : 1024;
    while (size < need) size *= 2;
    void *bigger = PyMem_Realloc(*buffer, (size_t)(size * item));
    if (!bigger) {
        PyErr_NoMemory();
        return 0;
    }
    *buffer = bigger;
    *cap = size;
    return 1;
}

/* Room for one more row; its validity bit set to `valid`. */
static int column_row(Column *c, int valid) {
    Py_ssize_t row = c->length;
    if (!grow((void **)&c->valid, &c->valid_cap, row / 8 + 1, 1)) return 0;
    if (row % 8 == 0) c->valid[row / 8] = 0;
    if (valid) c->valid[row / 8] |= (uint8_t)(1u << (row % 8));
    else c->nulls++;
    if (c->kind == COL_STR) {
        if (!grow((void **)&c->offsets, &c->offsets_cap, row + 2, sizeof(int64_t))) return 0;
        if (row == 0) c->offsets[0] = 0;
        c->offsets[row + 1] = (int64_t)c->data_len;
    }
    c->length++;
    return 1;
}

static int column_null(Column *c) {
    if (c->kind == COL_I64) {
        if (!grow((void **)&c->data, &c->data_cap, c->data_len + 8, 1)) return 0;
        memset(c->data + c->data_len, 0, 8);
        c->data_len += 8;
    } else if (c->kind == COL_BOOL) {
        if (!grow((void **)&c->data, &c->data_cap, c->data_len + 1, 1)) return 0;
        c->data[c->data_len++] = 0;
    }
    return column_row(c, 0);
}

static int column_i64(Column *c, int64_t value) {
    if (!grow((void **)&c->data, &c->data_cap, c->data_len + 8, 1)) return 0;
    memcpy(c->data + c->data_len, &value, 8);
    c->data_len += 8;
    return column_row(c, 1);
}

static int column_bool(Column *c, int value) {
    if (!grow((void **)&c->data, &c->data_cap, c->data_len + 1, 1)) return 0;
    c->data[c->data_len++] = (char)(value ? 1 : 0);
    return column_row(c, 1);
}

static int column_utf8(Column *c, const char *text, Py_ssize_t n) {
    if (!grow((void **)&c->data, &c->data_cap, c->data_len + n, 1)) return 0;
    if (n) memcpy(c->data + c->data_len, text, (size_t)n); /* no data yet (NULL) while every text is empty */
    c->data_len += n;
    return column_row(c, 1);
}

/* Append a Python value: None, or an int / bool / str as the column's kind takes. */
static int column_append(Column *c, PyObject *value) {
    if (value == Py_None) return column_null(c);
    if (c->kind == COL_I64) {
        if (!PyLong_Check(value) || PyBool_Check(value)) {
            PyErr_Format(PyExc_TypeError, "an int64 column takes int or None, not %.80s", Py_TYPE(value)->tp_name);
            return 0;
        }
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) return 0;
        return column_i64(c, (int64_t)v);
    }
    if (c->kind == COL_BOOL) {
        if (!PyBool_Check(value)) {
            PyErr_Format(PyExc_TypeError, "a bool column takes bool or None, not %.80s", Py_TYPE(value)->tp_name);
            return 0;
        }
        return column_bool(c, value == Py_True);
    }
    if (!PyUnicode_Check(value)) {
        PyErr_Format(PyExc_TypeError, "a str column takes str or None, not %.80s", Py_TYPE(value)->tp_name);
        return 0;
    }
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(value, &n);
    if (!text) return 0;
    return column_utf8(c, text, n);
}

static PyObject *Column_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    const char *kind;
    static char *names[] = {"kind", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "s", names, &kind)) return NULL;
    int k = strcmp(kind, "i64") == 0 ? COL_I64 : strcmp(kind, "bool") == 0 ? COL_BOOL : strcmp(kind, "str") == 0 ? COL_STR : -1;
    if (k < 0) {
        PyErr_Format(PyExc_ValueError, "Column kind: 'i64', 'bool' or 'str', got '%.80s'", kind);
        return NULL;
    }
    Column *c = (Column *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    c->kind = k;
    return (PyObject *)c;
}

/* No rows, no memory kept. */
static void column_empty(Column *c) {
    PyMem_Free(c->data);
    PyMem_Free(c->offsets);
    PyMem_Free(c->valid);
    c->data = NULL;
    c->offsets = NULL;
    c->valid = NULL;
    c->length = c->nulls = c->data_len = c->data_cap = c->offsets_cap = c->valid_cap = 0;
}

static void Column_dealloc(Column *c) {
    PyTypeObject *type = Py_TYPE(c);
    column_empty(c);
    type->tp_free((PyObject *)c);
    Py_DECREF(type); /* instances of a heap type hold a reference to it */
}

static Py_ssize_t Column_len(Column *c) { return c->length; }

static PyObject *Column_append(Column *c, PyObject *value) {
    if (!column_append(c, value)) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Column_clear(Column *c, PyObject *Py_UNUSED(ignored)) {
    column_empty(c);
    Py_RETURN_NONE;
}

static const char *KIND_NAMES[] = {"i64", "bool", "str"};

/* (kind, length, nulls, validity bytes, offsets bytes or None, data bytes): the state of the column. */
static PyObject *Column_state(Column *c, PyObject *Py_UNUSED(ignored)) {
    Py_ssize_t valid_bytes = (c->length + 7) / 8;
    PyObject *offsets;
    if (c->kind == COL_STR) {
        int64_t zero = 0;
        offsets = c->length ? PyBytes_FromStringAndSize((const char *)c->offsets, (Py_ssize_t)((c->length + 1) * 8))
                            : PyBytes_FromStringAndSize((const char *)&zero, 8);
    } else {
        offsets = Py_NewRef(Py_None);
    }
    if (!offsets) return NULL;
    return Py_BuildValue("(snnNNN)", KIND_NAMES[c->kind], c->length, c->nulls,
                         PyBytes_FromStringAndSize((const char *)c->valid, valid_bytes), offsets,
                         PyBytes_FromStringAndSize(c->data, c->data_len));
}

/* The number of bits among the first `to` of a bitmap that are not set. */
static Py_ssize_t unset_bits(const uint8_t *bits, Py_ssize_t to) {
    Py_ssize_t unset = 0;
    for (Py_ssize_t i = 0; i < to; i++) unset += !(bits[i / 8] >> (i % 8) & 1);
    return unset;
}

/* Why a column's buffers do not hold what append() would have made, or NULL when they do:
 * offsets that start at 0, never decrease and end at the data's end, UTF-8 text between them,
 * bools of 0 or 1, and as many nulls as unset validity bits. */
static const char *bad_buffers(int kind, Py_ssize_t length, Py_ssize_t nulls, const uint8_t *valid,
                               const int64_t *offsets, const uint8_t *data, Py_ssize_t data_len) {
    if (unset_bits(valid, length) != nulls) return "a null count that is not the validity's";
    if (kind == COL_BOOL) {
        for (Py_ssize_t i = 0; i < length; i++)
            if (data[i] > 1) return "a bool that is neither 0 nor 1";
    }
    if (kind != COL_STR) return NULL;
    if (offsets[0] != 0 || offsets[length] != (int64_t)data_len) return "offsets that do not span the data";
    for (Py_ssize_t i = 0; i < length; i++) {
        if (offsets[i + 1] < offsets[i]) return "offsets that decrease";
        const uint8_t *p = data + offsets[i], *end = data + offsets[i + 1];
        while (p < end) {
            unsigned cp;
            int n = *p < 0x80 ? 1 : utf8_sequence(p, end, &cp);
            if (!n) return "text that is not UTF-8";
            p += n;
        }
    }
    return NULL;
}

/* A column from the state state() gave (a worker's column, unpickled); ValueError for buffers
 * that append() could not have made. */
static PyObject *column_from_state(PyObject *module, PyObject *args) {
    SkimState *st = state_of(module);
    const char *kind;
    Py_ssize_t length, nulls;
    Py_buffer valid, data, off = {0};
    PyObject *offsets, *made = NULL;
    Column *c = NULL;
    if (!PyArg_ParseTuple(args, "snny*Oy*", &kind, &length, &nulls, &valid, &offsets, &data)) return NULL;
    PyObject *kind_args = Py_BuildValue("(s)", kind);
    c = kind_args ? (Column *)Column_new(st->column_type, kind_args, NULL) : NULL;
    Py_XDECREF(kind_args);
    if (!c) goto done;
    if (c->kind == COL_STR) {
        if (PyObject_GetBuffer(offsets, &off, PyBUF_SIMPLE) < 0) goto done;
    } else if (offsets != Py_None) {
        PyErr_Format(PyExc_ValueError, "column_from_state: a %s column has no offsets, got %.80s", kind,
                     Py_TYPE(offsets)->tp_name);
        goto done;
    }
    /* a bound that keeps every size below in range: (length + 1) * 8 */
    if (length < 0 || length > PY_SSIZE_T_MAX / 16 || nulls < 0 || nulls > length) {
        PyErr_Format(PyExc_ValueError, "column_from_state: length %zd and nulls %zd", length, nulls);
        goto done;
    }
    Py_ssize_t need_valid = (length + 7) / 8;
    if (valid.len != need_valid || (c->kind == COL_STR && off.len != (length + 1) * 8) ||
        (c->kind == COL_I64 && data.len != length * 8) || (c->kind == COL_BOOL && data.len != length)) {
        PyErr_SetString(PyExc_ValueError, "column_from_state: buffers that do not fit the length");
        goto done;
    }
    if (!grow((void **)&c->valid, &c->valid_cap, need_valid + 1, 1) ||
        !grow((void **)&c->data, &c->data_cap, data.len + 1, 1) ||
        (c->kind == COL_STR && !grow((void **)&c->offsets, &c->offsets_cap, length + 2, sizeof(int64_t))))
        goto done;
    if (need_valid) memcpy(c->valid, valid.buf, (size_t)need_valid);
    if (length % 8) c->valid[length / 8] &= (uint8_t)((1u << (length % 8)) - 1); /* rows appended later */
    if (data.len) memcpy(c->data, data.buf, (size_t)data.len);
    if (c->kind == COL_STR) memcpy(c->offsets, off.buf, (size_t)off.len); /* aligned, unlike the bytes */
    const char *why = bad_buffers(c->kind, length, nulls, c->valid, c->offsets, (const uint8_t *)c->data, data.len);
    if (why) {
        PyErr_Format(PyExc_ValueError, "column_from_state: %s", why);
        goto done;
    }
    c->length = length;
    c->nulls = nulls;
    c->data_len = data.len;
    made = (PyObject *)c;
    c = NULL;
done:
    Py_XDECREF(c);
    if (off.obj) PyBuffer_Release(&off);
    PyBuffer_Release(&valid);
    PyBuffer_Release(&data);
    return made;
}

/* The Arrow C data interface (its public specification), enough to hand a column to Polars
 * through the PyCapsule protocol (__arrow_c_array__) without pyarrow: one array, no children. */
#define ARROW_FLAG_NULLABLE 2

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

static void release_schema(struct ArrowSchema *schema) { schema->release = NULL; }

/* The array's buffers live in one block (private_data): pointers, validity, offsets, values. */
static void release_array(struct ArrowArray *array) {
    free(array->private_data);
    array->release = NULL;
}

static void schema_capsule_free(PyObject *capsule) {
    struct ArrowSchema *schema = PyCapsule_GetPointer(capsule, "arrow_schema");
    if (schema) {
        if (schema->release) schema->release(schema);
        free(schema);
    }
}

static void array_capsule_free(PyObject *capsule) {
    struct ArrowArray *array = PyCapsule_GetPointer(capsule, "arrow_array");
    if (array) {
        if (array->release) array->release(array);
        free(array);
    }
}

static const char *ARROW_FORMATS[] = {"l", "b", "U"};

/* __arrow_c_array__(requested_schema=None): (schema capsule, array capsule) of a copy of the
 * column (its own buffers keep growing); bools as Arrow's bits. */
static PyObject *Column_arrow_c_array(Column *c, PyObject *args, PyObject *kwds) {
    PyObject *requested = Py_None;
    static char *names[] = {"requested_schema", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", names, &requested)) return NULL;
    (void)requested; /* the column's own type is the only one offered */
    Py_ssize_t n = c->length, valid_bytes = c->nulls ? (n + 7) / 8 : 0;
    Py_ssize_t value_bytes = c->kind == COL_BOOL ? (n + 7) / 8 : c->data_len;
    Py_ssize_t offset_bytes = c->kind == COL_STR ? (n + 1) * 8 : 0;
    size_t header = 3 * sizeof(void *);
    char *block = malloc(header + (size_t)valid_bytes + (size_t)offset_bytes + (size_t)value_bytes + 8);
    struct ArrowSchema *schema = calloc(1, sizeof(*schema));
    struct ArrowArray *array = calloc(1, sizeof(*array));
    if (!block || !schema || !array) {
        free(block);
        free(schema);
        free(array);
        return PyErr_NoMemory();
    }
    const void **buffers = (const void **)block;
    char *at = block + header;
    char *validity = valid_bytes ? at : NULL;
    if (valid_bytes) memcpy(validity, c->valid, (size_t)valid_bytes);
    at += valid_bytes;
    char *offsets = NULL;
    if (c->kind == COL_STR) {
        offsets = at;
        if (n) memcpy(offsets, c->offsets, (size_t)offset_bytes);
        else memset(offsets, 0, 8);
        at += offset_bytes;
    }
    char *values = at;
    if (c->kind == COL_BOOL) {
        memset(values, 0, (size_t)value_bytes);
        for (Py_ssize_t i = 0; i < n; i++)
            if (c->data[i]) values[i / 8] |= (char)(1u << (i % 8));
    } else if (value_bytes) {
        memcpy(values, c->data, (size_t)value_bytes);
    }
    buffers[0] = validity;
    if (c->kind == COL_STR) {
        buffers[1] = offsets;
        buffers[2] = values;
    } else {
        buffers[1] = values;
    }
    *schema = (struct ArrowSchema){ARROW_FORMATS[c->kind], "", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL,
                                   release_schema, NULL};
    *array = (struct ArrowArray){n, c->nulls, 0, c->kind == COL_STR ? 3 : 2, 0, buffers, NULL, NULL,
                                 release_array, block};
    PyObject *schema_capsule = PyCapsule_New(schema, "arrow_schema", schema_capsule_free);
    if (!schema_capsule) free(schema);
    PyObject *array_capsule = schema_capsule ? PyCapsule_New(array, "arrow_array", array_capsule_free) : NULL;
    if (!array_capsule) {
        Py_XDECREF(schema_capsule);
        release_array(array);
        free(array);
        return NULL;
    }
    return Py_BuildValue("(NN)", schema_capsule, array_capsule);
}

static PyObject *Column_reduce(Column *c, PyObject *Py_UNUSED(ignored)) {
    PyObject *state = Column_state(c, NULL);
    if (!state) return NULL;
    PyObject *module = PyType_GetModuleByDef(Py_TYPE(c), &skim_module); /* borrowed */
    PyObject *restore = module ? PyObject_GetAttrString(module, "column_from_state") : NULL;
    if (!restore) {
        Py_DECREF(state);
        return NULL;
    }
    return Py_BuildValue("(NN)", restore, state);
}

/* Two columns are equal when they hold the same kind and values (their state). */
static PyObject *Column_richcompare(PyObject *a, PyObject *b, int op) {
    /* a is a Column (its type's slot is the one called), b may be anything */
    if ((op != Py_EQ && op != Py_NE) || !Py_IS_TYPE(b, Py_TYPE(a))) Py_RETURN_NOTIMPLEMENTED;
    PyObject *left = Column_state((Column *)a, NULL), *right = left ? Column_state((Column *)b, NULL) : NULL;
    PyObject *result = right ? PyObject_RichCompare(left, right, op) : NULL;
    Py_XDECREF(left);
    Py_XDECREF(right);
    return result;
}

static PyMethodDef Column_methods[] = {
    {"append", (PyCFunction)Column_append, METH_O, "append(value): None, or an int / bool / str as the column's kind takes."},
    {"clear", (PyCFunction)Column_clear, METH_NOARGS, "clear(): no rows, no memory kept."},
    {"state", (PyCFunction)Column_state, METH_NOARGS,
     "state() -> (kind, length, nulls, validity, offsets or None, data): the column's buffers (copies; bools a byte each)."},
    {"__reduce__", (PyCFunction)Column_reduce, METH_NOARGS, NULL},
    {"__arrow_c_array__", (PyCFunction)(void (*)(void))Column_arrow_c_array, METH_VARARGS | METH_KEYWORDS,
     "__arrow_c_array__(requested_schema=None): the column through the Arrow PyCapsule interface (a copy)."},
    {NULL, NULL, 0, NULL},
};

/* A heap type, made for each module object by PyType_FromModuleAndSpec (see skim_exec). */
static PyType_Slot Column_slots[] = {
    {Py_tp_dealloc, (void *)Column_dealloc},
    {Py_sq_length, (void *)Column_len},
    {Py_tp_doc, (void *)"Column(kind): a typed column the walker appends to ('i64', 'bool' or 'str'), as Arrow buffers."},
    {Py_tp_methods, Column_methods},
    {Py_tp_richcompare, (void *)Column_richcompare},
    {Py_tp_hash, (void *)PyObject_HashNotImplemented},
    {Py_tp_new, (void *)Column_new},
    {0, NULL},
};

static PyType_Spec Column_spec = {
    .name = "cc_analytics.frames.claude._skim.Column",
    .basicsize = sizeof(Column),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Column_slots,
};

static inline int is_column(SkimState *st, PyObject *slot) { return Py_IS_TYPE(slot, st->column_type); }

static inline int is_sink_column(SkimState *st, PyObject *slot) { return PyList_Check(slot) || is_column(st, slot); }

/* Append to a sink slot: a list, or a Column. */
static inline int sink_append(SkimState *st, PyObject *slot, PyObject *value) {
    if (is_column(st, slot)) return column_append((Column *)slot, value);
    return PyList_Append(slot, value) == 0;
}

/* --- The line ------------------------------------------------------------------------------ */

typedef struct {
    PyObject *kind; /* borrowed constant */
    PyObject *name; /* new reference or NULL (None) */
    int is_error;   /* -1: None */
    long long tokens;
    /* the marks (flag 8): */
    Val id;                         /* a tool call's id, a result's tool_use_id (J_ABSENT: None) */
    int memory;                     /* a prompt names a memory file (-1: None, not a prompt) */
    const uint8_t *input_s, *input_e; /* a tool call's input, its JSON text (NULL: None) */
} OutBlock;

#define MEMORY_MARK "CLAUDE.md" /* composition.MEMORY_MARK */

/* Whether text[0:n] holds MEMORY_MARK. */
static int holds_mark(const char *text, Py_ssize_t n) {
    Py_ssize_t m = (Py_ssize_t)sizeof(MEMORY_MARK) - 1;
    if (n < m) return 0;
    for (const char *p = text, *stop = text + n - m; p <= stop; p++) {
        p = memchr(p, MEMORY_MARK[0], (size_t)(stop - p + 1));
        if (!p) return 0;
        if (memcmp(p, MEMORY_MARK, (size_t)m) == 0) return 1;
    }
    return 0;
}

/* Whether the string v (unescaped) holds MEMORY_MARK; -1 when out of memory. */
static int names_memory(Scratch *S, const Val *v) {
    if (!v->escaped) return holds_mark((const char *)v->s, v->e - v->s);
    if (!reserve_text(S, v->e - v->s)) return -1;
    return holds_mark(S->text, unescape(v->s, v->e, S->text));
}

/* A prompt block of the string v: its tokens, and with marks whether it names a memory file. */
#define PROMPT_OF(v)                                                                          \
    do {                                                                                      \
        int memory_ = marks ? names_memory(S, (v)) : -1;                                      \
        if (marks && memory_ < 0) {                                                           \
            PyErr_NoMemory();                                                                 \
            goto error;                                                                       \
        }                                                                                     \
        out_blocks[out_count++] = (OutBlock){st->k_prompt, NULL, -1, tokens_of((v)->m.units, (v)->m.cjk), \
                                             .memory = memory_};                              \
    } while (0)

#define DECLINE_IF(cond) \
    do {                 \
        if (cond) goto decline; \
    } while (0)

/* The marks of a block as three new references (id, memory, input); 0 on error. */
static int marks_of(Scratch *S, const OutBlock *o, PyObject **marked) {
    marked[0] = o->id.t == J_STR ? str_of(S, &o->id) : Py_NewRef(Py_None);
    marked[1] = Py_NewRef(o->memory < 0 ? Py_None : o->memory ? Py_True : Py_False);
    marked[2] = o->input_s ? PyUnicode_DecodeUTF8((const char *)o->input_s, o->input_e - o->input_s, NULL)
                           : Py_NewRef(Py_None);
    if (marked[0] && marked[2]) return 1;
    for (int c = 0; c < 3; c++) Py_XDECREF(marked[c]);
    return 0;
}

/* Append the marks of a block to their three typed columns (id, memory, input); 0 on error. */
static int append_marks(Scratch *S, const OutBlock *o, Column **sink) {
    int ok;
    if (o->id.t != J_STR) ok = column_null(sink[0]);
    else if (!o->id.escaped) ok = column_utf8(sink[0], (const char *)o->id.s, o->id.e - o->id.s);
    else {
        PyObject *id = str_of(S, &o->id);
        ok = id && column_append(sink[0], id);
        Py_XDECREF(id);
    }
    return ok && (o->memory < 0 ? column_null(sink[1]) : column_bool(sink[1], o->memory)) &&
           (o->input_s ? column_utf8(sink[2], (const char *)o->input_s, o->input_e - o->input_s) : column_null(sink[2]));
}

/* Skim the line data[start:end] (0 <= start < end <= size, the size of the data; end < 0: the
 * line runs to the first line feed after the object, or the end of the data, and *line_end is
 * set to where it ends when 1 is returned; a line is then read once, not also searched for its
 * end). Returns 1 with out[] filled
 * with new references (the values of skim()'s tuple; with SKIM_NO_CWD_VERSION, out[3] and out[4]
 * stay NULL and the caller reads cwd_version[0] and [1], spans into the data), 0 where the walker must read the line,
 * -1 on error (an exception set). out[] is all NULL unless 1 is returned. */
#define SKIM_IDENTITY 1
#define SKIM_BLOCKS 2
#define SKIM_NO_CWD_VERSION 4
#define SKIM_MARKS 8
#define BLOCK_COLUMNS 5
#define MARKED_COLUMNS 8

static int skim_line(SkimState *st, const uint8_t *data, Py_ssize_t size, Py_ssize_t start, Py_ssize_t end,
                     Py_ssize_t row, long flags, PyObject **out, Val *cwd_version, Py_ssize_t *line_end,
                     Column **block_sink, PyObject *sink) {
    Scratch *S = &st->scratch;
    PyObject *prompt = NULL, *pricing = NULL, *blocks = NULL, *trigger = NULL, *pre = NULL;
    PyObject *tier = NULL, *speed = NULL, *five = NULL, *hour = NULL, *searches = NULL;
    int64_t usage[4] = {0, 0, 0, 0}; /* the four counts, where has_usage */
    int has_usage = 0;
    OutBlock *out_blocks = NULL;
    Py_ssize_t out_count = 0, nblocks = 0;
    int has_pricing = 0, synthetic = 0, ok = 0, status = 0;
    int user, assistant, system, attachment, envelope, sidechain, meta, summary, api_error;
    Parser P;
    Block dummy; /* P.block is never NULL: keys outside blocks compare against its input */
    Val top;
    for (int k = 0; k < RESULT_SIZE; k++) out[k] = NULL;
    int identity = (flags & 1) != 0, measure = (flags & 2) != 0, marks = measure && (flags & SKIM_MARKS) != 0;
    int columns = marks ? MARKED_COLUMNS : BLOCK_COLUMNS;
    memset(&P, 0, sizeof(P));
    P.p = data + start;
    P.end = data + (end < 0 ? size : end);
    P.limit = data + size;
    P.scratch = S;
    S->blocks_len = 0;
    S->keys_len = 0;
    P.block = &dummy;
    DECLINE_IF(*P.p != '{');
    memset(&top, 0, sizeof(top));
    DECLINE_IF(!parse_value(&P, &top, C_TOP));
    skip_ws(&P);
    if (end < 0) {
        DECLINE_IF(P.p != P.end && *P.p != '\n');
        *line_end = P.p - data;
    } else {
        DECLINE_IF(P.p != P.end);
    }

    /* The rules of _walk, for lines on which none of them reports a problem. */
    DECLINE_IF(P.type.t != J_STR || P.type.escaped);
    user = is_word(&P.type, "user");
    assistant = is_word(&P.type, "assistant");
    system = is_word(&P.type, "system");
    attachment = is_word(&P.type, "attachment");
    envelope = user || assistant || system || attachment;
    if (envelope) {
        DECLINE_IF(P.uuid.t != J_STR || P.session.t != J_STR || P.stamp.t != J_STR);
        DECLINE_IF(P.stamp.escaped);
        DECLINE_IF(P.stamp.e - P.stamp.s >= 4 && memcmp(P.stamp.s, "0000", 4) == 0);
    }
    sidechain = flag(&P.sidechain);
    meta = flag(&P.meta);
    summary = flag(&P.summary);
    api_error = flag(&P.api_error);
    DECLINE_IF(sidechain < 0 || meta < 0 || summary < 0 || api_error < 0);

    nblocks = S->blocks_len;
    out_blocks = PyMem_Malloc((size_t)(nblocks + 1) * sizeof(OutBlock));
    if (!out_blocks) {
        PyErr_NoMemory();
        goto error;
    }

    if (user) {
        Val *content = P.message.t == J_OBJ ? &P.mcontent : NULL;
        DECLINE_IF(content == NULL || (content->t != J_STR && content->t != J_ARR));
        if (content->t == J_STR) {
            PROMPT_OF(content);
            prompt = str_of(S, content);
            if (!prompt) goto error;
        } else {
            Py_ssize_t texts = 0, bytes = 0, units = 0, cjk = 0;
            int ascii = 1;
            for (Py_ssize_t k = 0; k < nblocks; k++) {
                Block *b = &S->blocks[k];
                DECLINE_IF(b->type.t == J_STR && b->type.escaped);
                if (is_word(&b->type, "text")) {
                    if (b->text.t == J_STR) {
                        texts++;
                        bytes += b->text.e - b->text.s;
                        units += b->text.m.units;
                        cjk += b->text.m.cjk;
                        ascii = ascii && b->text.m.ascii;
                    }
                } else if (is_word(&b->type, "tool_result")) {
                    Measure m;
                    if (b->content.t == J_STR) m = b->content.m;
                    else if (b->content.t == J_ARR) {
                        DECLINE_IF(b->item_bad);
                        m = b->results;
                    } else goto decline;
                    int error = flag(&b->is_error);
                    DECLINE_IF(error < 0);
                    out_blocks[out_count++] =
                        (OutBlock){st->k_tool_result, NULL, error, tokens_of(m.units, m.cjk), .id = b->tool_use_id, .memory = -1};
                    if (out_blocks[out_count - 1].id.t != J_STR) out_blocks[out_count - 1].id.t = J_ABSENT;
                }
            }
            if (texts) {
                bytes += texts - 1;
                if (!reserve_text(S, bytes)) {
                    PyErr_NoMemory();
                    goto error;
                }
                char *d = S->text;
                Py_ssize_t seen = 0;
                for (Py_ssize_t k = 0; k < nblocks; k++) {
                    Block *b = &S->blocks[k];
                    if (!is_word(&b->type, "text") || b->text.t != J_STR) continue;
                    if (seen++) *d++ = ' ';
                    if (b->text.escaped) d += unescape(b->text.s, b->text.e, d);
                    else {
                        memcpy(d, b->text.s, (size_t)(b->text.e - b->text.s));
                        d += b->text.e - b->text.s;
                    }
                }
                int memory = marks ? holds_mark(S->text, d - S->text) : -1;
                prompt = ascii ? ascii_str(S->text, d - S->text) : PyUnicode_DecodeUTF8(S->text, d - S->text, NULL);
                if (!prompt) goto error;
                units += texts - 1;
                out_blocks[out_count++] = (OutBlock){st->k_prompt, NULL, -1, tokens_of(units, cjk), .memory = memory};
            }
        }
    } else if (assistant) {
        DECLINE_IF(P.message.t != J_OBJ);
        Val *content = &P.mcontent;
        DECLINE_IF(content->t != J_ARR && content->t != J_ABSENT && content->t != J_NULL);
        if (content->t == J_ARR) {
            DECLINE_IF(P.content_not_object);
            for (Py_ssize_t k = 0; k < nblocks; k++) {
                Block *b = &S->blocks[k];
                DECLINE_IF(b->type.t == J_STR && b->type.escaped);
                if (is_word(&b->type, "text")) {
                    DECLINE_IF(b->text.t != J_STR);
                    out_blocks[out_count++] =
                        (OutBlock){st->k_text, NULL, -1, tokens_of(b->text.m.units, b->text.m.cjk), .memory = -1};
                } else if (is_word(&b->type, "thinking")) {
                    DECLINE_IF(b->thinking.t != J_STR);
                    out_blocks[out_count++] =
                        (OutBlock){st->k_thinking, NULL, -1, tokens_of(b->thinking.m.units, b->thinking.m.cjk), .memory = -1};
                } else if (is_word(&b->type, "tool_use")) {
                    Measure payload;
                    const uint8_t *input_s = (const uint8_t *)"null", *input_e = input_s + 4;
                    if (b->input.t == J_ABSENT) {
                        payload.units = 4; /* null */
                        payload.cjk = 0;
                    } else {
                        input_s = b->input_s;
                        input_e = b->input_e;
                        DECLINE_IF(!b->input_canonical);
                        measure_raw(b->input_s, b->input_e, &payload);
                    }
                    Py_ssize_t units = payload.units, cjk = payload.cjk;
                    PyObject *name = NULL;
                    if (b->name.t == J_STR) {
                        units += b->name.m.units;
                        cjk += b->name.m.cjk;
                        if (measure) {
                            name = str_of(S, &b->name);
                            if (!name) goto error;
                        }
                    }
                    out_blocks[out_count++] = (OutBlock){st->k_tool_use, name, -1, tokens_of(units, cjk), .id = b->id,
                                                         .memory = -1, .input_s = input_s, .input_e = input_e};
                    if (out_blocks[out_count - 1].id.t != J_STR) out_blocks[out_count - 1].id.t = J_ABSENT;
                }
            }
        }
        if (P.usage.t == J_OBJ) {
            /* An empty usage object reads as no usage (_usage); pricing is kept all the same. */
            for (int k = 0; k < 4 && !P.usage.empty; k++) {
                Val *v = &P.counts[k];
                if (v->t == J_ABSENT || v->t == J_NULL) usage[k] = 0;
                else if (v->t == J_INT) usage[k] = v->i;
                else goto decline;
            }
            has_usage = !P.usage.empty;
            if (P.creation.t != J_OBJ) {
                memset(&P.five, 0, sizeof(Val));
                memset(&P.hour, 0, sizeof(Val));
            }
            if (P.server.t != J_OBJ) memset(&P.searches, 0, sizeof(Val));
            if ((ok = optional_int(&P.five, &five)) <= 0) goto failed;
            if ((ok = optional_int(&P.hour, &hour)) <= 0) goto failed;
            if ((ok = optional_int(&P.searches, &searches)) <= 0) goto failed;
            if ((ok = optional_str(S, &P.tier, &tier)) <= 0) goto failed;
            if ((ok = optional_str(S, &P.speed, &speed)) <= 0) goto failed;
            has_pricing = 1;
            goto priced;
        failed:
            if (ok < 0) goto error;
            goto decline;
        priced:;
        } else {
            DECLINE_IF(P.usage.t != J_ABSENT && P.usage.t != J_NULL);
        }
        synthetic = is_word(&P.model, "<synthetic>");
        DECLINE_IF(P.model.t == J_STR && P.model.escaped);
    } else if (system) {
        DECLINE_IF(P.subtype.t == J_STR && P.subtype.escaped);
        if (is_word(&P.subtype, "compact_boundary")) {
            if (P.compact.t == J_OBJ) {
                if (P.trigger.t == J_STR) {
                    trigger = str_of(S, &P.trigger);
                    if (!trigger) goto error;
                }
                if (P.pre.t == J_INT) {
                    pre = PyLong_FromLongLong(P.pre.i);
                    if (!pre) goto error;
                }
            }
        } else if (P.content.t == J_STR && P.content.e > P.content.s) {
            out_blocks[out_count++] =
                (OutBlock){st->k_system, NULL, -1, tokens_of(P.content.m.units, P.content.m.cjk), .memory = -1};
        }
        synthetic = is_word(&P.subtype, "api_error");
    } else if (attachment) {
        if (P.attachment.t == J_OBJ) {
            DECLINE_IF(P.attach_type.t == J_STR && P.attach_type.escaped);
            if (is_word(&P.attach_type, "queued_command") && P.attach_prompt.t == J_STR &&
                P.attach_prompt.e > P.attach_prompt.s) {
                PROMPT_OF(&P.attach_prompt);
            }
        }
    }

    if (has_pricing) {
        pricing = PyTuple_New(6);
        if (!pricing) goto error;
        PyTuple_SET_ITEM(pricing, 0, PyLong_FromSsize_t(row));
        PyTuple_SET_ITEM(pricing, 1, five);
        PyTuple_SET_ITEM(pricing, 2, hour);
        PyTuple_SET_ITEM(pricing, 3, searches);
        PyTuple_SET_ITEM(pricing, 4, tier);
        PyTuple_SET_ITEM(pricing, 5, speed);
        five = hour = searches = tier = speed = NULL;
        if (!PyTuple_GET_ITEM(pricing, 0)) goto error;
    }
    if (measure && out_count && block_sink) {
        /* Five typed columns to append to (eight with marks): the blocks go there now, out[25]
         * stays None. */
        for (Py_ssize_t k = 0; k < out_count; k++) {
            OutBlock *o = &out_blocks[k];
            Py_ssize_t n;
            const char *kind = PyUnicode_AsUTF8AndSize(o->kind, &n);
            int appended = kind && column_i64(block_sink[0], (int64_t)row) && column_utf8(block_sink[1], kind, n) &&
                           (o->name ? column_append(block_sink[2], o->name) : column_null(block_sink[2])) &&
                           (o->is_error < 0 ? column_null(block_sink[3]) : column_bool(block_sink[3], o->is_error)) &&
                           column_i64(block_sink[4], (int64_t)o->tokens);
            Py_CLEAR(o->name);
            if (appended && marks) appended = append_marks(S, o, block_sink + BLOCK_COLUMNS);
            if (!appended) goto error;
        }
    } else if (measure && out_count) {
        blocks = PyTuple_New(columns);
        if (!blocks) goto error;
        for (int c = 0; c < columns; c++) {
            PyObject *column = PyList_New(out_count);
            if (!column) goto error;
            PyTuple_SET_ITEM(blocks, c, column);
        }
        for (Py_ssize_t k = 0; k < out_count; k++) {
            OutBlock *o = &out_blocks[k];
            PyObject *r = PyLong_FromSsize_t(row), *t = PyLong_FromLongLong(o->tokens);
            if (!r || !t) {
                Py_XDECREF(r);
                Py_XDECREF(t);
                goto error;
            }
            PyObject *name = o->name ? o->name : Py_None;
            PyObject *error = o->is_error < 0 ? Py_None : o->is_error ? Py_True : Py_False;
            o->name = NULL;
            if (name == Py_None) Py_INCREF(name);
            Py_INCREF(error);
            Py_INCREF(o->kind);
            PyList_SET_ITEM(PyTuple_GET_ITEM(blocks, 0), k, r);
            PyList_SET_ITEM(PyTuple_GET_ITEM(blocks, 1), k, o->kind);
            PyList_SET_ITEM(PyTuple_GET_ITEM(blocks, 2), k, name);
            PyList_SET_ITEM(PyTuple_GET_ITEM(blocks, 3), k, error);
            PyList_SET_ITEM(PyTuple_GET_ITEM(blocks, 4), k, t);
            if (marks) {
                PyObject *marked[3];
                if (!marks_of(S, o, marked)) goto error;
                for (int c = 0; c < 3; c++) PyList_SET_ITEM(PyTuple_GET_ITEM(blocks, BLOCK_COLUMNS + c), k, marked[c]);
            }
        }
    }

#define SET(i, value)                           \
    do {                                        \
        if (!(out[(i)] = (value))) goto error;  \
    } while (0)
#define NONE() (Py_INCREF(Py_None), Py_None)
#define BOOL(x) ((x) ? (Py_INCREF(Py_True), Py_True) : (Py_INCREF(Py_False), Py_False))
    /* A typed column of the sink takes a string or flag now (no object made for it); out[i] is
     * then Ellipsis, which append_line skips. */
#define TYPED(i) (sink && is_column(st, PyTuple_GET_ITEM(sink, (i))) ? (Column *)PyTuple_GET_ITEM(sink, (i)) : NULL)
#define STR(i, cond, v)                                                  \
    do {                                                                 \
        Column *typed_ = TYPED(i);                                       \
        if (typed_ && (!(cond) || (v)->t != J_STR || !(v)->escaped)) {   \
            if (!((cond) && (v)->t == J_STR                              \
                      ? column_utf8(typed_, (const char *)(v)->s, (v)->e - (v)->s) \
                      : column_null(typed_)))                            \
                goto error;                                              \
            out[(i)] = Py_NewRef(Py_Ellipsis);                           \
        } else {                                                         \
            SET(i, (cond) ? str_or_none(S, v) : NONE());                 \
        }                                                                \
    } while (0)
#define FLAG(i, x)                                                       \
    do {                                                                 \
        Column *typed_ = TYPED(i);                                       \
        if (typed_) {                                                    \
            if (!column_bool(typed_, (x))) goto error;                   \
            out[(i)] = Py_NewRef(Py_Ellipsis);                           \
        } else {                                                         \
            SET(i, BOOL(x));                                             \
        }                                                                \
    } while (0)
    if (TYPED(0)) STR(0, 1, &P.type);
    else SET(0, kind_str(st, &P.type)); /* the common kinds are interned: one object for every line */
    STR(1, system, &P.subtype);
    SET(2, stamp_value(S, &P.stamp));
    if (!(flags & SKIM_NO_CWD_VERSION)) {
        SET(3, str_or_none(S, &P.cwd));
        SET(4, str_or_none(S, &P.version));
    }
    STR(5, assistant, &P.model);
    STR(6, assistant, &P.id);
    STR(7, assistant, &P.request);
    FLAG(8, envelope);
    FLAG(9, sidechain);
    FLAG(10, meta);
    FLAG(11, summary);
    FLAG(12, synthetic || api_error);
    FLAG(13, user && P.interrupted.t == J_STR);
    for (int k = 0; k < 4; k++) {
        Column *typed_ = TYPED(14 + k);
        if (typed_) {
            if (!(has_usage ? column_i64(typed_, usage[k]) : column_null(typed_))) goto error;
            out[14 + k] = Py_NewRef(Py_Ellipsis);
        } else {
            SET(14 + k, has_usage ? PyLong_FromLongLong(usage[k]) : NONE());
        }
    }
    SET(18, prompt ? prompt : NONE());
    prompt = NULL;
    SET(19, trigger ? trigger : NONE());
    trigger = NULL;
    SET(20, pre ? pre : NONE());
    pre = NULL;
    STR(21, identity, &P.uuid);
    STR(22, identity, &P.session);
    if (identity && P.agent.t != J_STR && TYPED(23)) {
        SET(23, NONE()); /* append_line puts the path's agent id there */
    } else {
        STR(23, identity, &P.agent);
    }
    SET(24, pricing ? pricing : NONE());
    pricing = NULL;
    SET(25, blocks ? blocks : NONE());
    blocks = NULL;
#undef SET
#undef NONE
#undef BOOL
#undef TYPED
#undef STR
#undef FLAG
    PyMem_Free(out_blocks);
    if (cwd_version) {
        cwd_version[0] = P.cwd;
        cwd_version[1] = P.version;
    }
    return 1;

decline:
    status = 0;
    goto cleanup;
error:
    status = -1;
cleanup:
    for (int k = 0; k < RESULT_SIZE; k++) Py_CLEAR(out[k]);
    if (out_blocks) {
        for (Py_ssize_t k = 0; k < out_count; k++) Py_XDECREF(out_blocks[k].name);
        PyMem_Free(out_blocks);
    }
    Py_XDECREF(prompt);
    Py_XDECREF(trigger);
    Py_XDECREF(pre);
    Py_XDECREF(pricing);
    Py_XDECREF(blocks);
    Py_XDECREF(five);
    Py_XDECREF(hour);
    Py_XDECREF(searches);
    Py_XDECREF(tier);
    Py_XDECREF(speed);
    return status;
}

static PyObject *skim(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "skim(raw, start, end, row, flags)");
        return NULL;
    }
    Py_ssize_t start, end, row, flags;
    if (!ssize_arg(args[1], &start) || !ssize_arg(args[2], &end) || !ssize_arg(args[3], &row) ||
        !ssize_arg(args[4], &flags))
        return NULL;
    flags &= SKIM_IDENTITY | SKIM_BLOCKS | SKIM_MARKS;
    Data d;
    if (!data_of(args[0], &d)) return NULL;
    PyObject *out[RESULT_SIZE], *result = NULL;
    if (start < 0 || end > d.size || start >= end) {
        PyErr_SetString(PyExc_ValueError, "skim: bad line bounds");
        goto done;
    }
    int got = skim_line(state_of(module), d.data, d.size, start, end, row, (long)flags, out, NULL, NULL, NULL, NULL);
    if (got < 0) goto done;
    if (got == 0) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    result = PyTuple_New(RESULT_SIZE);
    if (!result) {
        for (int k = 0; k < RESULT_SIZE; k++) Py_DECREF(out[k]);
        goto done;
    }
    for (int k = 0; k < RESULT_SIZE; k++) PyTuple_SET_ITEM(result, k, out[k]);
done:
    data_release(&d);
    return result;
}

/* The sink of skim_lines: the walker's lists, at the index of the value they take in skim's
 * tuple (None at CWD and VERSION, and at the identity lists without identity), then the
 * pricing list, the five block lists (or None: blocks not kept), the line numbers, the agent
 * id of the file's path. */
enum { SINK_CWD = 3, SINK_VERSION = 4, SINK_IDENTITY = 21, SINK_AGENT = 23, SINK_PRICING = 24, SINK_BLOCKS = 25,
       SINK_LINES = 26, SINK_PATH_AGENT = 27, SINK_SIZE = 28 };

/* Whether the string span v (unescaped) reads as the str last (a str, or None: never). */
static int same_str(const Val *v, PyObject *last) {
    if (last == Py_None || !PyUnicode_Check(last) || v->escaped) return 0;
    Py_ssize_t n;
    const char *text;
    if (PyUnicode_IS_ASCII(last)) {
        n = PyUnicode_GET_LENGTH(last);
        text = (const char *)PyUnicode_DATA(last);
    } else {
        text = PyUnicode_AsUTF8AndSize(last, &n);
        if (!text) {
            PyErr_Clear();
            return 0;
        }
    }
    return n == v->e - v->s && memcmp(text, v->s, (size_t)n) == 0;
}

/* Append what one skimmed line keeps to the sink; cwd and version as the walker keeps them
 * (state: [want cwd, last version]). 0 on error. */
static int append_line(SkimState *st, PyObject *sink, PyObject **out, const Val *cwd_version, PyObject *state,
                       Py_ssize_t number) {
    PyObject *blocks = PyTuple_GET_ITEM(sink, SINK_BLOCKS);
    PyObject *value;
    int failed;
    PyObject *lines = PyTuple_GET_ITEM(sink, SINK_LINES);
    if (is_column(st, lines)) {
        if (!column_i64((Column *)lines, (int64_t)number)) return 0;
    } else {
        value = PyLong_FromSsize_t(number);
        if (!value) return 0;
        failed = PyList_Append(lines, value) < 0;
        Py_DECREF(value);
        if (failed) return 0;
    }
    /* cwd: only on the first line of a file that has one; version: only where it changes */
    const Val *cwd = &cwd_version[0], *version = &cwd_version[1];
    if (PyList_GET_ITEM(state, 0) == Py_True && cwd->t == J_STR) {
        value = str_of(&st->scratch, cwd);
        if (!value) return 0;
        PyList_SetItem(state, 0, Py_NewRef(Py_False));
    } else {
        value = Py_NewRef(Py_None);
    }
    failed = !sink_append(st, PyTuple_GET_ITEM(sink, SINK_CWD), value);
    Py_DECREF(value);
    if (failed) return 0;
    value = NULL;
    if (version->t == J_STR && !same_str(version, PyList_GET_ITEM(state, 1))) {
        value = str_of(&st->scratch, version);
        if (!value) return 0;
        int changed = PyObject_RichCompareBool(value, PyList_GET_ITEM(state, 1), Py_NE);
        if (changed < 0) {
            Py_DECREF(value);
            return 0;
        }
        if (changed) PyList_SetItem(state, 1, Py_NewRef(value));
        else Py_CLEAR(value);
    }
    if (!value) value = Py_NewRef(Py_None);
    failed = !sink_append(st, PyTuple_GET_ITEM(sink, SINK_VERSION), value);
    Py_DECREF(value);
    if (failed) return 0;
    for (Py_ssize_t k = 0; k < RESULT_SIZE; k++) {
        if (k == SINK_CWD || k == SINK_VERSION) continue;
        value = out[k];
        if (value == Py_Ellipsis) continue; /* appended to its typed column by skim_line */
        if (k == SINK_PRICING) {
            if (value != Py_None && PyList_Append(PyTuple_GET_ITEM(sink, SINK_PRICING), value) < 0) return 0;
        } else if (k == SINK_BLOCKS) {
            if (value == Py_None || blocks == Py_None) continue;
            for (Py_ssize_t c = 0; c < PyTuple_GET_SIZE(blocks); c++) {
                PyObject *column = PyTuple_GET_ITEM(blocks, c), *items = PyTuple_GET_ITEM(value, c);
                if (is_column(st, column)) {
                    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++)
                        if (!column_append((Column *)column, PyList_GET_ITEM(items, i))) return 0;
                } else {
                    Py_ssize_t at = PyList_GET_SIZE(column);
                    if (PyList_SetSlice(column, at, at, items) < 0) return 0;
                }
            }
        } else {
            PyObject *list = PyTuple_GET_ITEM(sink, k);
            if (list == Py_None) continue;
            if (k == SINK_AGENT && value == Py_None) value = PyTuple_GET_ITEM(sink, SINK_PATH_AGENT);
            if (!sink_append(st, list, value)) return 0;
        }
    }
    return 1;
}

static PyObject *skim_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    SkimState *st = state_of(module);
    if (nargs != 5 || !PyTuple_CheckExact(args[3]) || PyTuple_GET_SIZE(args[3]) != SINK_SIZE ||
        !PyList_CheckExact(args[4]) || PyList_GET_SIZE(args[4]) != 2) {
        PyErr_SetString(PyExc_TypeError, "skim_lines(raw, start, number, sink, [want_cwd, last_version])");
        return NULL;
    }
    PyObject *sink = args[3], *state = args[4];
    PyObject *lines = PyTuple_GET_ITEM(sink, SINK_LINES);
    if (!is_sink_column(st, lines)) {
        PyErr_SetString(PyExc_TypeError, "skim_lines: the sink's line numbers are not a list or Column");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < SINK_PRICING; k++) {
        PyObject *list = PyTuple_GET_ITEM(sink, k);
        if (k != SINK_CWD && k != SINK_VERSION && list != Py_None && !is_sink_column(st, list)) {
            PyErr_SetString(PyExc_TypeError, "skim_lines: a column of the sink is not a list or Column");
            return NULL;
        }
    }
    if (!is_sink_column(st, PyTuple_GET_ITEM(sink, SINK_CWD)) || !is_sink_column(st, PyTuple_GET_ITEM(sink, SINK_VERSION)) ||
        !PyList_Check(PyTuple_GET_ITEM(sink, SINK_PRICING))) {
        PyErr_SetString(PyExc_TypeError, "skim_lines: cwd and version must be lists or Columns, pricing a list");
        return NULL;
    }
    PyObject *blocks = PyTuple_GET_ITEM(sink, SINK_BLOCKS);
    if (blocks != Py_None) {
        if (!PyTuple_CheckExact(blocks) ||
            (PyTuple_GET_SIZE(blocks) != BLOCK_COLUMNS && PyTuple_GET_SIZE(blocks) != MARKED_COLUMNS)) {
            PyErr_SetString(PyExc_TypeError, "skim_lines: the sink's blocks are not five or eight lists");
            return NULL;
        }
        for (Py_ssize_t c = 0; c < PyTuple_GET_SIZE(blocks); c++) {
            if (!is_sink_column(st, PyTuple_GET_ITEM(blocks, c))) {
                PyErr_SetString(PyExc_TypeError, "skim_lines: the sink's blocks are not five or eight lists");
                return NULL;
            }
        }
    }
    Py_ssize_t start, number;
    if (!ssize_arg(args[1], &start) || !ssize_arg(args[2], &number)) return NULL;
    if (start < 0 || number < 0) {
        PyErr_SetString(PyExc_ValueError, "skim_lines: negative start or number");
        return NULL;
    }
    long flags = (PyTuple_GET_ITEM(sink, SINK_IDENTITY) != Py_None ? SKIM_IDENTITY : 0) |
                 (blocks != Py_None ? SKIM_BLOCKS : 0) | SKIM_NO_CWD_VERSION;
    if (blocks != Py_None && PyTuple_GET_SIZE(blocks) == MARKED_COLUMNS) flags |= SKIM_MARKS;
    /* Blocks kept in typed columns are appended to them as each line is skimmed. */
    Column *block_columns_of[MARKED_COLUMNS], **block_columns = NULL;
    if (blocks != Py_None) {
        int typed = 1;
        for (Py_ssize_t c = 0; c < PyTuple_GET_SIZE(blocks); c++) {
            PyObject *column = PyTuple_GET_ITEM(blocks, c);
            typed &= is_column(st, column);
            block_columns_of[c] = (Column *)column;
        }
        if (typed) block_columns = block_columns_of;
    }
    Data d;
    if (!data_of(args[0], &d)) return NULL;
    PyObject *result = NULL, *out[RESULT_SIZE];
    Val cwd_version[2];
    if (number > PY_SSIZE_T_MAX - d.size - 1) { /* a line number past the data's last could overflow */
        PyErr_SetString(PyExc_ValueError, "skim_lines: a line number too large for the data");
        goto done;
    }
    const uint8_t *data = d.data, *end = data + d.size;
    /* Lines are cut on LF only; each LF-separated segment counts, empty ones are skipped. A
     * line starting with "{" is skimmed to its end; any other, or one declined, is searched for
     * its end and handed to the walker unless empty. */
    while (start <= d.size) {
        const uint8_t *p = data + start;
        number++;
        if (start < d.size && *p == '{') {
            Py_ssize_t skimmed_to;
            int got = skim_line(st, data, d.size, start, -1, PyObject_Length(lines), flags, out, cwd_version,
                                &skimmed_to, block_columns, sink);
            if (got < 0) goto done;
            if (got == 1) {
                int appended = append_line(st, sink, out, cwd_version, state, number);
                for (int k = 0; k < RESULT_SIZE; k++) Py_XDECREF(out[k]);
                if (!appended) goto done;
                start = skimmed_to + 1;
                continue;
            }
        }
        Py_ssize_t stop_at = line_end(p, end) - data;
        if (stop_at > start) {
            result = Py_BuildValue("(nnn)", start, stop_at, number);
            goto done;
        }
        start = stop_at + 1;
    }
    result = PyLong_FromSsize_t(number);
done:
    data_release(&d);
    return result;
}

/* --- The module ---------------------------------------------------------------------------- */

static PyMethodDef skim_methods[] = {
    {"skim", (PyCFunction)(void (*)(void))skim, METH_FASTCALL,
     "skim(raw, start, end, row, flags) -> tuple | None\n\n"
     "What the walker keeps of the line raw[start:end], or None where the walker must read it."},
    {"skim_lines", (PyCFunction)(void (*)(void))skim_lines, METH_FASTCALL,
     "skim_lines(raw, start, number, sink, state) -> (start, end, number) | None\n\n"
     "skim() the lines of raw from offset start (the line after line `number`), appending what\n"
     "they keep to the walker's lists (sink), cwd and version as the walker keeps them (state:\n"
     "[want cwd, last version], updated); returns the span and number of the first line the\n"
     "walker must read, or None at the end of the data."},
    {"column_from_state", (PyCFunction)column_from_state, METH_VARARGS,
     "column_from_state(kind, length, nulls, validity, offsets, data) -> Column: the inverse of Column.state()."},
    {NULL, NULL, 0, NULL},
};

static int intern(PyObject **slot, const char *text) {
    *slot = PyUnicode_InternFromString(text);
    return *slot != NULL;
}

static int skim_exec(PyObject *module) {
    SkimState *st = state_of(module);
    if (!intern(&st->k_prompt, "prompt") || !intern(&st->k_text, "text") || !intern(&st->k_thinking, "thinking") ||
        !intern(&st->k_tool_use, "tool_use") || !intern(&st->k_tool_result, "tool_result") ||
        !intern(&st->k_system, "system") || !intern(&st->s_user, "user") || !intern(&st->s_assistant, "assistant") ||
        !intern(&st->s_system, "system") || !intern(&st->s_attachment, "attachment"))
        return -1;
    st->column_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &Column_spec, NULL);
    if (!st->column_type) return -1;
    if (PyModule_AddObjectRef(module, "Column", (PyObject *)st->column_type) < 0 ||
        PyModule_AddIntConstant(module, "MAX_DEPTH", MAX_DEPTH) < 0 ||
        PyModule_AddStringConstant(module, "DUPLICATE_KEYS", DUPLICATE_KEYS) < 0)
        return -1;
    return 0;
}

static int skim_traverse(PyObject *module, visitproc visit, void *arg) {
    SkimState *st = state_of(module);
    Py_VISIT(st->column_type);
    return 0;
}

static int skim_clear(PyObject *module) {
    SkimState *st = state_of(module);
    Py_CLEAR(st->column_type);
    Py_CLEAR(st->k_prompt);
    Py_CLEAR(st->k_text);
    Py_CLEAR(st->k_thinking);
    Py_CLEAR(st->k_tool_use);
    Py_CLEAR(st->k_tool_result);
    Py_CLEAR(st->k_system);
    Py_CLEAR(st->s_user);
    Py_CLEAR(st->s_assistant);
    Py_CLEAR(st->s_system);
    Py_CLEAR(st->s_attachment);
    return 0;
}

static void skim_free(void *module) {
    SkimState *st = state_of((PyObject *)module);
    if (!st) return;
    skim_clear((PyObject *)module);
    PyMem_Free(st->scratch.blocks);
    PyMem_RawFree(st->scratch.keys);
    PyMem_RawFree(st->scratch.text);
    PyMem_RawFree(st->scratch.levels);
    memset(&st->scratch, 0, sizeof(st->scratch));
}

static PyModuleDef_Slot skim_slots[] = {
    {Py_mod_exec, (void *)skim_exec},
#ifdef Py_mod_multiple_interpreters /* 3.12: nothing is shared between module objects */
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil /* 3.13: the scratch buffers of a module object are used by one thread at a time */
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef skim_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_skim",
    .m_doc = "A C skimmer of clean Claude Code lines (see decode.py).",
    .m_size = sizeof(SkimState),
    .m_methods = skim_methods,
    .m_slots = skim_slots,
    .m_traverse = skim_traverse,
    .m_clear = skim_clear,
    .m_free = skim_free,
};

PyMODINIT_FUNC PyInit__skim(void) { return PyModuleDef_Init(&skim_module); }
