/* The walk of a GitHub Copilot CLI event log (cc_analytics/frames/copilot/events.py) over its
 * common lines, in C.
 *
 * scan_lines(raw, start, number, torn, columns, pending, model, window, state) reads raw from
 * offset start (the line after line `number`), cutting lines on LF as events.parse does (a line's
 * trailing CRs left out, a line of whitespace skipped), and for each line makes the event row
 * _Walk.event makes of it, appended to `columns` (and an answer's pending request to `pending`),
 * as long as the line is one it takes; it stops at the first line it does not take and returns
 * that line's (start, end, number), for events.parse to read in Python and call again from the
 * next line; None at the end of the data. `columns`: the rows column by column (25 lists, the
 * order of events.Parsed.events). A line is taken when:
 *
 *   * it is not the torn last line (`torn`: its number, 0 when the data ends with a LF), starts
 *     with "{" and ends with "}", and is one valid JSON object as the JSON line policy reads it
 *     (cc_analytics/jsonline.py: nesting up to MAX_DEPTH, the first of a repeated key wins; an
 *     integer beyond 64 bits, an escaped key: declined);
 *   * its "type" is a string and not one of the session events that change the walk's state
 *     (session.start, session.model_change, session.resume, session.truncation,
 *     session.shutdown: Python's), and its "data" is an object, or absent or null;
 *   * an answer's outputTokens is absent, null or an integer >= 0 (else a problem: Python's);
 *   * every value it estimates (frames.chatlog.messages.value_tokens: a string as text, any other
 *     value as the text orjson.dumps writes of it) is measured exactly: a string whose text the
 *     estimate's scalar path measures (past_cjk), an integer, a literal, or an array or object
 *     whose bytes are orjson's (canonical: no whitespace, no float, no repeated key, no escape
 *     orjson does not write); else the line is declined.
 *
 * model and window: the walk's model in force and window (only the lines Python reads change
 * them). state: [lines], the lines taken here are added to it.
 *
 * The JSON primitives are shared with the other formats' extensions: ../_jsonscan.h and
 * ../_jsonscan_parse.h. The module holds nothing, in static variables or module state. Plain C99
 * and the CPython C API (3.11 and later).
 */
#include "../_jsonscan.h"

typedef enum { X_SKIP = 0, X_TOP, X_DATA, X_RESULT, X_CALLS, X_CALL, X_MEASURED } Ctx;

typedef struct {
    Span *keys;
    Py_ssize_t keys_cap, keys_len;
    char *text;
    Py_ssize_t text_cap;
    Level *levels;
    Py_ssize_t levels_cap;
    Val *names; /* an answer's tool names (J_ABSENT: a call without a string name) */
    Py_ssize_t names_cap, names_len;
} Scratch;

/* A value the estimate measures, and whether its bytes are orjson's (arrays and objects). */
typedef struct {
    Val v;
    int canonical;
} Measured;

typedef struct {
    const uint8_t *p, *end;
    const uint8_t *limit;
    int depth;
    int canonical_depth;
    int canonical;
    Scratch *scratch;
    /* the line's object */
    Val kind, data, id, stamp;
    /* its data */
    Measured content, reasoning, result_content;
    Val model, output, message_id, request_id, api_call_id, result, success, calls;
    int oom; /* a buffer could not grow */
    /* the calls of toolRequests: their estimate, or declined */
    long long call_tokens;
    int call_declined;
    /* the call being read */
    Val call_name;
    Measured call_arguments;
} Parser;

static int parse_value(Parser *P, Val *out, Ctx ctx);

#include "../_jsonscan_parse.h"

#define KEY(lit) (n == (Py_ssize_t)sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)

/* Where the value of key k goes in context ctx (NULL: nowhere), and its own context; a value the
 * estimate measures goes to *measured. */
static Val *target(Parser *P, Ctx ctx, const uint8_t *k, Py_ssize_t n, Ctx *sub, Measured **measured) {
    *sub = X_SKIP;
    *measured = NULL;
    switch (ctx) {
    case X_TOP:
        if (KEY("type")) return &P->kind;
        if (KEY("data")) {
            *sub = X_DATA;
            return &P->data;
        }
        if (KEY("id")) return &P->id;
        if (KEY("timestamp")) return &P->stamp;
        return NULL;
    case X_DATA:
        if (KEY("content")) {
            *measured = &P->content;
            return &P->content.v;
        }
        if (KEY("reasoningText")) {
            *measured = &P->reasoning;
            return &P->reasoning.v;
        }
        if (KEY("model")) return &P->model;
        if (KEY("outputTokens")) return &P->output;
        if (KEY("messageId")) return &P->message_id;
        if (KEY("requestId")) return &P->request_id;
        if (KEY("apiCallId")) return &P->api_call_id;
        if (KEY("success")) return &P->success;
        if (KEY("toolRequests")) {
            *sub = X_CALLS;
            return &P->calls;
        }
        if (KEY("result")) { /* an object: its content is measured; any other value: itself */
            *sub = X_RESULT;
            return &P->result;
        }
        return NULL;
    case X_RESULT:
        if (KEY("content")) {
            *measured = &P->result_content;
            return &P->result_content.v;
        }
        return NULL;
    case X_CALL:
        if (KEY("name")) return &P->call_name;
        if (KEY("arguments")) {
            *measured = &P->call_arguments;
            return &P->call_arguments.v;
        }
        return NULL;
    default:
        return NULL;
    }
}

/* A value the estimate measures: parsed with its canonical bytes checked (see _jsonscan_parse.h). */
static int parse_measured(Parser *P, Measured *m) {
    int outer_depth = P->canonical_depth, outer = P->canonical;
    Py_ssize_t keys = P->scratch->keys_len;
    P->canonical_depth = 1;
    P->canonical = 1;
    int ok = parse_value(P, &m->v, X_MEASURED);
    m->canonical = P->canonical;
    P->canonical_depth = outer_depth;
    P->canonical = outer;
    P->scratch->keys_len = keys;
    return ok;
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
            Measured *measured = NULL;
            Val *slot = target(P, ctx, key.s, key.e - key.s, &sub, &measured);
            if (slot != NULL && slot->t != J_ABSENT) { /* a repeated key: the first one was read */
                slot = NULL;
                measured = NULL;
                sub = X_SKIP;
            }
            if (slot == NULL) slot = &scratch;
            if (measured != NULL) {
                if (!parse_measured(P, measured)) return 0;
            } else if (sub == X_RESULT && *P->p != '{') { /* a result that is no object is measured itself */
                if (!parse_measured(P, &P->result_content)) return 0;
                *slot = P->result_content.v;
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

static int push_name(Scratch *S, const Val *name) {
    if (S->names_len == S->names_cap) {
        Py_ssize_t cap = S->names_cap ? S->names_cap * 2 : 16;
        Val *grown = PyMem_RawRealloc(S->names, (size_t)cap * sizeof(Val));
        if (!grown) return 0;
        S->names = grown;
        S->names_cap = cap;
    }
    S->names[S->names_len++] = *name;
    return 1;
}

static long long value_tokens(const Measured *m);

/* One call of toolRequests (an object): its name, and the estimate of its name and arguments. */
static int call_element(Parser *P, Val *out) {
    memset(&P->call_name, 0, sizeof(Val));
    memset(&P->call_arguments, 0, sizeof(Measured));
    if (!parse_object(P, out, X_CALL)) return 0;
    Val none;
    memset(&none, 0, sizeof(Val));
    if (!push_name(P->scratch, P->call_name.t == J_STR ? &P->call_name : &none)) {
        P->oom = 1;
        return 0;
    }
    Measured name = {P->call_name, 1};
    long long a = value_tokens(&name), b = value_tokens(&P->call_arguments);
    if (a < 0 || b < 0) P->call_declined = 1;
    else P->call_tokens += a + b;
    return 1;
}

/* toolRequests as an array: its objects are calls; its other values are validated and skipped.
 * Any other value of toolRequests is validated and skipped. */
static int parse_calls(Parser *P, Val *out) {
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
            if (*P->p == '{') {
                if (++P->depth > MAX_DEPTH) return 0;
                int got = call_element(P, &scratch);
                P->depth--;
                if (!got) return 0;
            } else if (!parse_value(P, &scratch, X_SKIP)) {
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

/* The value at P->p (no whitespace before it). Objects and arrays a field is read from take
 * their context; the others are skipped without recursion (skip_value). */
static int parse_value(Parser *P, Val *out, Ctx ctx) {
    switch (*P->p) {
    case '{':
    case '[': {
        int own = *P->p == '{' ? ctx == X_TOP || ctx == X_DATA || ctx == X_RESULT : ctx == X_CALLS;
        if (!own) return skip_value(P, out);
        if (++P->depth > MAX_DEPTH) return 0;
        int ok = *P->p == '{' ? parse_object(P, out, ctx) : parse_calls(P, out);
        P->depth--;
        return ok;
    }
    default:
        return parse_scalar(P, out);
    }
}

/* --- Estimates ----------------------------------------------------------------------------- */

/* What messages.value_tokens gives of a measured value, or -1 (declined). */
static long long value_tokens(const Measured *m) {
    const Val *v = &m->v;
    switch (v->t) {
    case J_ABSENT:
    case J_NULL:
        return 0;
    case J_STR:
        return past_cjk(v) ? -1 : tokens_of(v->m.units, v->m.cjk);
    case J_TRUE:
        return tokens_of(4, 0);
    case J_FALSE:
        return tokens_of(5, 0);
    case J_INT:
        return tokens_of(v->e - v->s, 0);
    case J_ARR:
    case J_OBJ: {
        if (!m->canonical) return -1;
        Val raw = *v;
        measure_raw(v->s, v->e, &raw.m);
        return past_cjk(&raw) ? -1 : tokens_of(raw.m.units, raw.m.cjk);
    }
    default: /* a float: orjson writes it its own way */
        return -1;
    }
}

/* --- Lines ------------------------------------------------------------------------------- */

static inline int is(const Val *v, const char *text) {
    size_t n = strlen(text);
    return v->t == J_STR && !v->escaped && (size_t)(v->e - v->s) == n && memcmp(v->s, text, n) == 0;
}

/* The strings a call makes rows of, made once per call. */
enum { R_USER = 0, R_ASSISTANT, R_TOOL, R_SYSTEM, R_JOIN, R_EMPTY, R_SIZE };

typedef struct {
    PyObject *roles[R_SIZE];
    PyObject *model, *window; /* borrowed: the walk's */
    PyObject *kinds[16];      /* the types met so far, kept for the next rows */
    Py_ssize_t kinds_len;
} Run;

enum { K_OTHER = 0, K_USER, K_SYSTEM, K_ANSWER, K_REASONING, K_RESULT, K_TOOL_START, K_COMPACTION, K_PYTHON };

static int kind_code(const Val *kind) {
    if (is(kind, "user.message")) return K_USER;
    if (is(kind, "assistant.message")) return K_ANSWER;
    if (is(kind, "tool.execution_complete")) return K_RESULT;
    if (is(kind, "tool.execution_start")) return K_TOOL_START;
    if (is(kind, "assistant.reasoning")) return K_REASONING;
    if (is(kind, "system.message")) return K_SYSTEM;
    if (is(kind, "session.compaction_complete")) return K_COMPACTION;
    if (is(kind, "session.start") || is(kind, "session.model_change") || is(kind, "session.resume") ||
        is(kind, "session.truncation") || is(kind, "session.shutdown"))
        return K_PYTHON;
    return K_OTHER;
}

/* The str of a line's type (one object per type and call). */
static PyObject *kind_str(Run *run, Scratch *S, const Val *kind) {
    Py_ssize_t n = kind->e - kind->s;
    if (!kind->escaped) {
        for (Py_ssize_t k = 0; k < run->kinds_len; k++) {
            PyObject *known = run->kinds[k];
            if (PyUnicode_GET_LENGTH(known) == n && PyUnicode_KIND(known) == PyUnicode_1BYTE_KIND &&
                PyUnicode_IS_ASCII(known) && memcmp(PyUnicode_DATA(known), kind->s, (size_t)n) == 0)
                return Py_NewRef(known);
        }
    }
    PyObject *made = str_of(S, kind);
    if (made && !kind->escaped && kind->m.ascii && run->kinds_len < 16) run->kinds[run->kinds_len++] = Py_NewRef(made);
    return made;
}

static PyObject *long_of(long long v) { return PyLong_FromLongLong(v); }

/* A non-empty string's str, else NULL without an exception (Python's `_text(x) or ...`). */
static PyObject *filled_str(Scratch *S, const Val *v, int *failed) {
    if (v->t != J_STR || v->s == v->e) return NULL;
    PyObject *out = str_of(S, v);
    if (!out) *failed = 1;
    return out;
}

#define TAKEN 1
#define DECLINED 0
#define FAILED (-1)
#define ROW_SIZE 25
enum { AT_LINE = 0, AT_INDEX, AT_ID, AT_KIND, AT_ROLE, AT_STAMP, AT_MODEL, AT_TEXT, AT_TOOLS, AT_ERRORS, AT_USAGE,
       AT_REQUESTS = AT_USAGE + 5, AT_OCCUPANCY, AT_WINDOW, AT_COMPACTION, AT_BUCKETS, AT_USED = AT_BUCKETS + 5 };

/* --- The tally ---------------------------------------------------------------------------- */

/* A file's tally (events.py: new_tally, _count_event), held in C while tally_lines runs: read
 * from the caller's list at the start and written back at the end. The least and greatest
 * timestamps are spans of the data or of the list's str (alive until the write-back). */
enum { T_ROWS = 0, T_FIRST_STAMP, T_LAST_STAMP, T_STAMP_SIZE, T_ODD, T_MODELS, T_LAST_MODEL, T_COMPACTIONS, T_BUCKETS,
       T_CONTEXT = T_BUCKETS + 5, T_MESSAGES, T_PROMPTS, T_FIRST_PROMPT, T_FIRST_TOOL, T_SIZE };

typedef struct {
    PyObject *list;   /* the caller's tally (borrowed) */
    PyObject *models; /* its list of models (borrowed) */
    PyObject *last_model; /* owned; Py_None when none */
    long long n[T_SIZE];  /* the whole-number places */
    const uint8_t *first, *last; /* the least and greatest timestamp text (NULL: none) */
} Tally;

/* The UTF-8 of a str, or NULL (no error) when it is none or cannot be had. */
static const uint8_t *utf8_of(PyObject *text, Py_ssize_t *n) {
    if (!PyUnicode_Check(text)) return NULL;
    const char *out = PyUnicode_AsUTF8AndSize(text, n);
    if (!out) PyErr_Clear();
    return (const uint8_t *)out;
}

static int tally_load(Tally *T, PyObject *list) {
    static const int numbers[] = {T_ROWS, T_STAMP_SIZE, T_ODD, T_COMPACTIONS, T_BUCKETS, T_BUCKETS + 1, T_BUCKETS + 2,
                                  T_BUCKETS + 3, T_BUCKETS + 4, T_CONTEXT, T_MESSAGES, T_PROMPTS, T_FIRST_PROMPT,
                                  T_FIRST_TOOL};
    memset(T, 0, sizeof(Tally));
    T->list = list;
    for (size_t k = 0; k < sizeof(numbers) / sizeof(numbers[0]); k++) {
        long long v = PyLong_AsLongLong(PyList_GET_ITEM(list, numbers[k]));
        if (v == -1 && PyErr_Occurred()) return 0;
        T->n[numbers[k]] = v;
    }
    T->models = PyList_GET_ITEM(list, T_MODELS);
    if (!PyList_Check(T->models)) {
        PyErr_SetString(PyExc_TypeError, "tally_lines: the tally's models are not a list");
        return 0;
    }
    T->last_model = Py_NewRef(PyList_GET_ITEM(list, T_LAST_MODEL));
    Py_ssize_t n;
    T->first = utf8_of(PyList_GET_ITEM(list, T_FIRST_STAMP), &n);
    if (T->first && n != T->n[T_STAMP_SIZE]) T->first = NULL;
    T->last = utf8_of(PyList_GET_ITEM(list, T_LAST_STAMP), &n);
    if (T->last && n != T->n[T_STAMP_SIZE]) T->last = NULL;
    if ((PyList_GET_ITEM(list, T_FIRST_STAMP) != Py_None && !T->first) ||
        (PyList_GET_ITEM(list, T_LAST_STAMP) != Py_None && !T->last))
        T->n[T_ODD] = 1; /* a stamp the loop cannot compare: the file is read again in full */
    return 1;
}

/* Write the tally back to the caller's list (1), or fail with an exception (0). */
static int tally_store(Tally *T) {
    int ok = 1;
    for (int k = 0; k < T_SIZE && ok; k++) {
        PyObject *v = NULL;
        if (k == T_MODELS) continue;
        if (k == T_FIRST_STAMP || k == T_LAST_STAMP) {
            const uint8_t *span = k == T_FIRST_STAMP ? T->first : T->last;
            Py_ssize_t n;
            const uint8_t *held = utf8_of(PyList_GET_ITEM(T->list, k), &n);
            if (!span || span == held) continue; /* unchanged */
            v = PyUnicode_DecodeUTF8((const char *)span, (Py_ssize_t)T->n[T_STAMP_SIZE], NULL);
        } else if (k == T_LAST_MODEL) {
            v = Py_NewRef(T->last_model);
        } else if (k == T_ODD) {
            v = PyBool_FromLong(T->n[k] != 0);
        } else {
            v = PyLong_FromLongLong(T->n[k]);
        }
        if (!v || PyList_SetItem(T->list, k, v) < 0) ok = 0;
    }
    return ok;
}

/* Whether s[0:n] is written YYYY-MM-DDTHH:MM:SS[.f]Z, 1 to 9 digits of fraction (events.plain_stamp). */
static int plain_stamp(const uint8_t *s, Py_ssize_t n) {
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    if (n < 20 || n > 30 || s[n - 1] != 'Z' || (n > 20 && (n < 22 || s[19] != '.'))) return 0;
    for (int k = 0; k < 19; k++)
        if (shape[k] == 'd' ? !(s[k] >= '0' && s[k] <= '9') : s[k] != (uint8_t)shape[k]) return 0;
    for (Py_ssize_t k = 20; k < n - 1; k++)
        if (!(s[k] >= '0' && s[k] <= '9')) return 0;
    return 1;
}

/* Whether a str holds exactly the bytes s[0:n]. */
static int same_text(PyObject *text, const uint8_t *s, Py_ssize_t n) {
    Py_ssize_t m;
    const uint8_t *u = utf8_of(text, &m);
    return u && m == n && memcmp(u, s, (size_t)n) == 0;
}

/* One event counted in the tally (events._count_event); `model`: the row's model, borrowed (NULL: none). */
static int count_event(Tally *T, const Val *stamp, int role, PyObject *model, int tools, int compaction,
                       const long long *buckets) {
    long long index = T->n[T_ROWS]++;
    if (stamp->t == J_STR && !T->n[T_ODD]) {
        Py_ssize_t n = stamp->e - stamp->s;
        if (stamp->escaped || !plain_stamp(stamp->s, n) || (T->n[T_STAMP_SIZE] && n != T->n[T_STAMP_SIZE])) {
            T->n[T_ODD] = 1;
        } else {
            T->n[T_STAMP_SIZE] = n;
            if (!T->first || memcmp(stamp->s, T->first, (size_t)n) < 0) T->first = stamp->s;
            if (!T->last || memcmp(stamp->s, T->last, (size_t)n) > 0) T->last = stamp->s;
        }
    }
    if (model && model != T->last_model) {
        int known = PySequence_Contains(T->models, model);
        if (known < 0 || (!known && PyList_Append(T->models, model) < 0)) return 0;
        Py_SETREF(T->last_model, Py_NewRef(model));
    }
    long long total = 0;
    for (int k = 0; k < 5; k++) {
        T->n[T_BUCKETS + k] += buckets[k];
        total += buckets[k];
    }
    if (compaction) {
        T->n[T_COMPACTIONS]++;
        T->n[T_CONTEXT] = total;
        T->n[T_MESSAGES] = 1;
    } else {
        T->n[T_CONTEXT] += total;
        T->n[T_MESSAGES]++;
    }
    if (role == R_USER) {
        T->n[T_PROMPTS]++;
        if (T->n[T_FIRST_PROMPT] < 0) T->n[T_FIRST_PROMPT] = index;
    }
    if (tools && T->n[T_FIRST_TOOL] < 0) T->n[T_FIRST_TOOL] = index;
    return 1;
}

/* An answer's pending request: (index, (index, the messageId or the row's id, requestId or
 * apiCallId, time, model, 0, 0, 0, output, 0, None, window)) appended to pending. */
static int pend_answer(Scratch *S, Run *run, PyObject *pending, Parser *P, PyObject *index, PyObject *id,
                       PyObject *stamp, PyObject *model, long long output) {
    int failed = 0;
    PyObject *identifier = filled_str(S, &P->message_id, &failed);
    if (!identifier && !failed) identifier = Py_NewRef(id);
    PyObject *request_id = filled_str(S, &P->request_id, &failed);
    if (!request_id && !failed) request_id = P->api_call_id.t == J_STR ? str_of(S, &P->api_call_id) : Py_NewRef(Py_None);
    PyObject *request = NULL, *entry = NULL;
    if (identifier && request_id && !failed)
        request = Py_BuildValue("(OOOOOiiiLiOO)", index, identifier, request_id, stamp, model, 0, 0, 0, output, 0, Py_None,
                                run->window);
    if (request) entry = PyTuple_Pack(2, index, request);
    if (!entry || PyList_Append(pending, entry) < 0) failed = 1;
    Py_XDECREF(identifier);
    Py_XDECREF(request_id);
    Py_XDECREF(request);
    Py_XDECREF(entry);
    return !failed;
}

/* A tallied line's count (its row is not made). */
static int tally_line(Scratch *S, Run *run, Tally *T, PyObject *pending, Parser *P, int code, int role,
                      const long long *buckets, long long output) {
    PyObject *model = NULL; /* owned */
    if (code == K_ANSWER) {
        if (P->model.t == J_STR && P->model.s != P->model.e) {
            Py_ssize_t n = P->model.e - P->model.s;
            if (!P->model.escaped && T->last_model != Py_None && same_text(T->last_model, P->model.s, n))
                model = Py_NewRef(T->last_model);
            else if (!(model = str_of(S, &P->model)))
                return FAILED;
        } else if (run->model != Py_None) {
            model = Py_NewRef(run->model);
        }
    }
    PyObject *index = PyLong_FromLongLong(T->n[T_ROWS]);
    int ok = index && count_event(T, &P->stamp, role, model, code == K_ANSWER && S->names_len > 0,
                                  code == K_COMPACTION, buckets);
    if (ok && code == K_ANSWER && output > 0) {
        PyObject *id = P->id.t == J_STR ? str_of(S, &P->id) : Py_NewRef(Py_None);
        PyObject *stamp = P->stamp.t == J_STR ? str_of(S, &P->stamp) : Py_NewRef(Py_None);
        ok = id && stamp && pend_answer(S, run, pending, P, index, id, stamp, model ? model : Py_None, output);
        Py_XDECREF(id);
        Py_XDECREF(stamp);
    }
    Py_XDECREF(index);
    Py_XDECREF(model);
    return ok ? TAKEN : FAILED;
}

/* The line data[start:stop] (no LF, its CRs left out, not blank): its row appended (or, with a
 * tally, counted), or declined. */
static int take_line(Scratch *S, Run *run, PyObject *columns, Tally *T, PyObject *pending, const uint8_t *s,
                     const uint8_t *e, const uint8_t *limit, Py_ssize_t number) {
    if (*s != '{' || e[-1] != '}') return DECLINED;
    Parser P;
    memset(&P, 0, sizeof(Parser));
    P.p = s;
    P.end = e;
    P.limit = limit;
    P.scratch = S;
    S->keys_len = 0;
    S->names_len = 0;
    Val top;
    if (!parse_value(&P, &top, X_TOP)) return P.oom ? FAILED : DECLINED;
    if (top.t != J_OBJ || P.p != e) return DECLINED;
    if (P.kind.t != J_STR || P.kind.escaped) return DECLINED;
    if (P.data.t != J_OBJ && P.data.t != J_ABSENT && P.data.t != J_NULL) return DECLINED;
    int code = kind_code(&P.kind);
    if (code == K_PYTHON) return DECLINED;

    long long buckets[5] = {0, 0, 0, 0, 0}, output = 0;
    int errors = 0;
    int role = R_SYSTEM;
    if (code == K_USER) {
        role = R_USER;
        if (P.content.v.t == J_STR) {
            if (past_cjk(&P.content.v)) return DECLINED;
            buckets[1] = tokens_of(P.content.v.m.units, P.content.v.m.cjk);
        }
    } else if (code == K_SYSTEM) {
        if ((buckets[0] = value_tokens(&P.content)) < 0) return DECLINED;
    } else if (code == K_REASONING) {
        role = R_ASSISTANT;
        if ((buckets[2] = value_tokens(&P.content)) < 0) return DECLINED;
    } else if (code == K_RESULT) {
        role = R_TOOL;
        errors = P.success.t == J_FALSE;
        if ((buckets[3] = value_tokens(&P.result_content)) < 0) return DECLINED;
    } else if (code == K_ANSWER) {
        role = R_ASSISTANT;
        if (P.output.t == J_INT) {
            if (P.output.i < 0) return DECLINED;
            output = P.output.i;
        } else if (P.output.t != J_ABSENT && P.output.t != J_NULL) {
            return DECLINED;
        }
        long long said = value_tokens(&P.content), thought = value_tokens(&P.reasoning);
        if (said < 0 || thought < 0) return DECLINED;
        buckets[2] = said + thought;
        if (P.calls.t == J_ARR) {
            if (P.call_declined) return DECLINED;
            buckets[4] = P.call_tokens;
        } else {
            S->names_len = 0; /* a toolRequests that is no array names no tool */
        }
    } else if (code == K_TOOL_START) {
        role = R_TOOL;
    }

    if (T) return tally_line(S, run, T, pending, &P, code, role, buckets, output);

    /* The row, as _Walk.row makes it, appended to its columns. */
    int failed = 0;
    PyObject *row[ROW_SIZE];
    memset(row, 0, sizeof(row));
    Py_ssize_t index = PyList_GET_SIZE(PyList_GET_ITEM(columns, 0));
    PyObject *model = NULL, *text = NULL, *tools = NULL;
    if (code == K_ANSWER) {
        model = filled_str(S, &P.model, &failed);
        if (!model && !failed) model = Py_NewRef(run->model);
    }
    if ((code == K_ANSWER || code == K_USER) && P.content.v.t == J_STR) {
        text = str_of(S, &P.content.v);
        if (!text) failed = 1;
    }
    if (code == K_ANSWER && S->names_len > 0) {
        tools = PyUnicode_New(0, 127);
        for (Py_ssize_t k = 0; tools && k < S->names_len; k++) {
            PyObject *name = S->names[k].t == J_STR ? str_of(S, &S->names[k]) : Py_NewRef(run->roles[R_EMPTY]);
            if (!name) {
                Py_CLEAR(tools);
                break;
            }
            if (k > 0) PyUnicode_Append(&tools, run->roles[R_JOIN]);
            if (tools) PyUnicode_Append(&tools, name);
            Py_DECREF(name);
        }
        if (!tools) failed = 1;
    }
    row[AT_LINE] = long_of(number);
    row[AT_INDEX] = long_of(index);
    row[AT_ID] = P.id.t == J_STR ? str_of(S, &P.id) : Py_NewRef(Py_None);
    row[AT_KIND] = kind_str(run, S, &P.kind);
    row[AT_ROLE] = Py_NewRef(run->roles[role]);
    row[AT_STAMP] = P.stamp.t == J_STR ? str_of(S, &P.stamp) : Py_NewRef(Py_None);
    row[AT_MODEL] = model ? model : Py_NewRef(Py_None);
    row[AT_TEXT] = text ? text : Py_NewRef(Py_None);
    row[AT_TOOLS] = tools ? tools : Py_NewRef(Py_None);
    row[AT_ERRORS] = long_of(errors);
    for (int k = 0; k < 5; k++) row[AT_USAGE + k] = long_of(k == 1 ? output : 0);
    row[AT_REQUESTS] = long_of(0);
    row[AT_OCCUPANCY] = Py_NewRef(Py_None);
    row[AT_WINDOW] = Py_NewRef(run->window);
    row[AT_COMPACTION] = PyBool_FromLong(code == K_COMPACTION);
    for (int k = 0; k < 5; k++) row[AT_BUCKETS + k] = long_of(buckets[k]);
    row[AT_USED] = Py_NewRef(Py_False);
    for (int k = 0; k < ROW_SIZE; k++)
        if (!row[k]) failed = 1;
    for (int k = 0; k < ROW_SIZE && !failed; k++)
        if (PyList_Append(PyList_GET_ITEM(columns, k), row[k]) < 0) failed = 1;
    if (!failed && code == K_ANSWER && output > 0 &&
        !pend_answer(S, run, pending, &P, row[AT_INDEX], row[AT_ID], row[AT_STAMP], row[AT_MODEL], output))
        failed = 1;
    for (int k = 0; k < ROW_SIZE; k++) Py_XDECREF(row[k]);
    return failed ? FAILED : TAKEN;
}

/* Whether data[s:e] is blank as bytes.strip() sees it (ASCII whitespace only). */
static int blank(const uint8_t *s, const uint8_t *e) {
    for (; s < e; s++)
        if (!(*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == 0x0B || *s == 0x0C)) return 0;
    return 1;
}

/* The loop of scan_lines and tally_lines: `kept` is the 25 columns, or the tally (a list of T_SIZE). */
static PyObject *walk_lines(PyObject *const *args, Py_ssize_t nargs, int tallied) {
    int shaped = nargs == 9 && PyList_CheckExact(args[4]) &&
                 PyList_GET_SIZE(args[4]) == (tallied ? T_SIZE : ROW_SIZE) && PyList_CheckExact(args[5]) &&
                 PyList_CheckExact(args[8]) && PyList_GET_SIZE(args[8]) == 1;
    for (Py_ssize_t k = 0; shaped && !tallied && k < ROW_SIZE; k++) shaped = PyList_CheckExact(PyList_GET_ITEM(args[4], k));
    if (!shaped) {
        PyErr_SetString(PyExc_TypeError,
                        tallied ? "tally_lines(raw, start, number, torn, tally (18 places), pending, model, window, [lines])"
                                : "scan_lines(raw, start, number, torn, columns (25 lists), pending, model, window, [lines])");
        return NULL;
    }
    Py_ssize_t start, number, torn;
    if (!ssize_arg(args[1], &start) || !ssize_arg(args[2], &number) || !ssize_arg(args[3], &torn)) return NULL;
    PyObject *columns = tallied ? NULL : args[4], *pending = args[5], *state = args[8];
    Py_ssize_t lines;
    if (!ssize_arg(PyList_GET_ITEM(state, 0), &lines)) return NULL;
    Tally tally, *T = NULL;
    if (tallied) {
        if (!tally_load(&tally, args[4])) {
            Py_XDECREF(tally.last_model);
            return NULL;
        }
        T = &tally;
    }
    Data d;
    if (!data_of(args[0], &d)) {
        if (T) Py_DECREF(T->last_model);
        return NULL;
    }
    PyObject *result = NULL;
    Run run;
    memset(&run, 0, sizeof(Run));
    Scratch S;
    memset(&S, 0, sizeof(S));
    if (start < 0 || number < 0 || number > PY_SSIZE_T_MAX - d.size - 1) {
        PyErr_SetString(PyExc_ValueError, "scan_lines: bad offset or line number for the data");
        goto done;
    }
    run.model = args[6];
    run.window = args[7];
    static const char *const roles[R_SIZE] = {"user", "assistant", "tool", "system", "\x1f", ""};
    for (int k = 0; k < R_SIZE; k++)
        if (!(run.roles[k] = PyUnicode_InternFromString(roles[k]))) goto done;
    const uint8_t *data = d.data, *limit = data + d.size;
    while (start < d.size) {
        const uint8_t *p = data + start, *stop = line_end(p, limit), *e = stop;
        number++;
        while (e > p && e[-1] == '\r') e--;
        if (!blank(p, e)) {
            int got = number == torn ? DECLINED : take_line(&S, &run, columns, T, pending, p, e, limit, number);
            if (got == FAILED) {
                if (!PyErr_Occurred()) PyErr_NoMemory();
                goto done;
            }
            if (got == DECLINED) {
                result = Py_BuildValue("(nnn)", start, (Py_ssize_t)(stop - data), number);
                break;
            }
            lines++;
        }
        start = stop - data + 1;
    }
    if (!result) result = Py_NewRef(Py_None);
    PyObject *counted = PyLong_FromSsize_t(lines);
    if (!counted || PyList_SetItem(state, 0, counted) < 0) Py_CLEAR(result);
    if (result && T && !tally_store(T)) Py_CLEAR(result); /* the spans are read before the data is let go */
done:
    if (T) Py_DECREF(T->last_model);
    for (int k = 0; k < R_SIZE; k++) Py_XDECREF(run.roles[k]);
    for (Py_ssize_t k = 0; k < run.kinds_len; k++) Py_DECREF(run.kinds[k]);
    PyMem_RawFree(S.keys);
    PyMem_RawFree(S.text);
    PyMem_RawFree(S.levels);
    PyMem_RawFree(S.names);
    data_release(&d);
    return result;
}

static PyObject *scan_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    return walk_lines(args, nargs, 0);
}

static PyObject *tally_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    return walk_lines(args, nargs, 1);
}

/* --- The lean read's line types ----------------------------------------------------------- */

/* laid_out(raw): what events._laid_out finds of raw: None unless raw ends with a LF and every
 * line (raw cut on LF, nothing stripped) is in Copilot CLI's layout, {"type":"K","data":{...}
 * with K free of backslashes and the line ending with "}"; else (lines, wanted): the number of
 * lines and, for each line whose K is one a request is made of (events.REQUEST_TYPES), its
 * (place from 0, K as bytes, start, end). */
static int request_type(const uint8_t *k, Py_ssize_t n) {
#define IS(lit) (n == (Py_ssize_t)sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)
    return IS("session.start") || IS("session.model_change") || IS("session.resume") || IS("session.truncation") ||
           IS("assistant.message") || IS("session.shutdown");
#undef IS
}

static PyObject *laid_out(PyObject *module, PyObject *raw) {
    (void)module;
    static const char head[] = "{\"type\":\"", data_key[] = "\",\"data\":{";
    const Py_ssize_t head_n = sizeof(head) - 1, data_n = sizeof(data_key) - 1;
    Data d;
    if (!data_of(raw, &d)) return NULL;
    PyObject *wanted = NULL, *result = NULL;
    if (d.size > 0 && d.data[d.size - 1] != '\n') goto none;
    if (!(wanted = PyList_New(0))) goto done;
    const uint8_t *data = d.data, *limit = data + d.size;
    Py_ssize_t start = 0, place = 0;
    while (start < d.size) {
        const uint8_t *p = data + start, *stop = line_end(p, limit);
        Py_ssize_t n = stop - p;
        if (n < head_n || memcmp(p, head, (size_t)head_n) != 0 || p[n - 1] != '}') goto none;
        const uint8_t *kind = p + head_n, *quote = memchr(kind, '"', (size_t)(stop - kind));
        if (!quote || stop - quote < data_n || memcmp(quote, data_key, (size_t)data_n) != 0) goto none;
        if (memchr(kind, '\\', (size_t)(quote - kind))) goto none;
        if (request_type(kind, quote - kind)) {
            PyObject *item = Py_BuildValue("(ny#nn)", place, (const char *)kind, (Py_ssize_t)(quote - kind), start,
                                           (Py_ssize_t)(stop - data));
            if (!item || PyList_Append(wanted, item) < 0) {
                Py_XDECREF(item);
                goto done;
            }
            Py_DECREF(item);
        }
        place++;
        start = stop - data + 1;
    }
    result = Py_BuildValue("(nO)", place, wanted);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(wanted);
    data_release(&d);
    return result;
}

/* --- The module ---------------------------------------------------------------------------- */

static PyMethodDef events_methods[] = {
    {"scan_lines", (PyCFunction)(void (*)(void))scan_lines, METH_FASTCALL,
     "scan_lines(raw, start, number, torn, columns, pending, model, window, [lines]) -> (start, end, number) | None\n\n"
     "events.parse's walk over the common lines of raw from offset start (the line after line\n"
     "`number`), appending their event rows to columns and their answers' requests to pending (see\n"
     "the module's source); returns the span and number of the first line Python must read, or\n"
     "None at the end of the data."},
    {"tally_lines", (PyCFunction)(void (*)(void))tally_lines, METH_FASTCALL,
     "tally_lines(raw, start, number, torn, tally, pending, model, window, [lines]) -> (start, end, number) | None\n\n"
     "scan_lines counting each line's event in the file's tally (events.new_tally's places) instead\n"
     "of appending its row."},
    {"laid_out", (PyCFunction)laid_out, METH_O,
     "laid_out(raw) -> (lines, [(place, type, start, end), ...]) | None\n\n"
     "events._laid_out's reading of raw: None unless every line is in Copilot CLI's layout and raw\n"
     "ends with a LF; else its line count and the lines of the types a request is made of."},
    {NULL, NULL, 0, NULL},
};

static int events_exec(PyObject *module) {
    if (PyModule_AddIntConstant(module, "MAX_DEPTH", MAX_DEPTH) < 0 ||
        PyModule_AddStringConstant(module, "DUPLICATE_KEYS", DUPLICATE_KEYS) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot events_slots[] = {
    {Py_mod_exec, (void *)events_exec},
#ifdef Py_mod_multiple_interpreters /* 3.12: nothing is shared between module objects */
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil /* 3.13: the rows are appended to lists the caller owns, with the GIL held */
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef events_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_events",
    .m_doc = "The GitHub Copilot CLI event walk over common lines, in C (see events.py).",
    .m_size = 0,
    .m_methods = events_methods,
    .m_slots = events_slots,
};

PyMODINIT_FUNC PyInit__events(void) { return PyModuleDef_Init(&events_module); }
