/* The tools information interface as a tool sees it (MPI 3.1 section 14.3):
 * every control variable, performance variable and category is enumerated
 * and each query checked against the standard's contract, before MPI_Init,
 * while MPI runs and after MPI_Finalize.
 *
 * - MPI_T_init_thread/MPI_T_finalize count: two inits need two finalizes, a
 *   third finalize is MPI_T_ERR_NOT_INITIALIZED, and so is any call then.
 * - Strings (14.3.3): a NULL buffer or a length of 0 returns only the length
 *   (the string's plus one); a short buffer gets a truncated, terminated
 *   string and the full length plus one.
 * - get_info accepts NULL for any output. Names are unique (pvars: per
 *   class), get_index finds each variable and category by its name, types,
 *   verbosities, bindings, scopes and classes are the standard's constants,
 *   enumerations give their items.
 * - Every variable is in a category, categories list valid indices, and the
 *   category stamp does not change while nothing is added.
 * - Every control variable can be read (string ones as count characters);
 *   a few have values the program knows (MPC_NRANKS).
 */
#include "mpit_common.h"

static int g_rank = -1;

static int is_type(MPI_Datatype t) {
    return t == MPI_INT || t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG ||
           t == MPI_UNSIGNED_LONG_LONG || t == MPI_DOUBLE || t == MPI_CHAR || t == MPI_COUNT;
}

static size_t type_size(MPI_Datatype t) {
    if (t == MPI_INT) return sizeof(int);
    if (t == MPI_UNSIGNED) return sizeof(unsigned);
    if (t == MPI_UNSIGNED_LONG) return sizeof(unsigned long);
    if (t == MPI_UNSIGNED_LONG_LONG) return sizeof(unsigned long long);
    if (t == MPI_DOUBLE) return sizeof(double);
    if (t == MPI_COUNT) return sizeof(MPI_Count);
    return 1;
}

static int is_verbosity(int v) {
    return v == MPI_T_VERBOSITY_USER_BASIC || v == MPI_T_VERBOSITY_USER_DETAIL ||
           v == MPI_T_VERBOSITY_USER_ALL || v == MPI_T_VERBOSITY_TUNER_BASIC ||
           v == MPI_T_VERBOSITY_TUNER_DETAIL || v == MPI_T_VERBOSITY_TUNER_ALL ||
           v == MPI_T_VERBOSITY_MPIDEV_BASIC || v == MPI_T_VERBOSITY_MPIDEV_DETAIL ||
           v == MPI_T_VERBOSITY_MPIDEV_ALL;
}

static int is_bind(int b) {
    return b == MPI_T_BIND_NO_OBJECT || b == MPI_T_BIND_MPI_COMM || b == MPI_T_BIND_MPI_DATATYPE ||
           b == MPI_T_BIND_MPI_ERRHANDLER || b == MPI_T_BIND_MPI_FILE ||
           b == MPI_T_BIND_MPI_GROUP || b == MPI_T_BIND_MPI_OP || b == MPI_T_BIND_MPI_REQUEST ||
           b == MPI_T_BIND_MPI_WIN || b == MPI_T_BIND_MPI_MESSAGE || b == MPI_T_BIND_MPI_INFO;
}

static int is_scope(int s) {
    return s == MPI_T_SCOPE_CONSTANT || s == MPI_T_SCOPE_READONLY || s == MPI_T_SCOPE_LOCAL ||
           s == MPI_T_SCOPE_GROUP || s == MPI_T_SCOPE_GROUP_EQ || s == MPI_T_SCOPE_ALL ||
           s == MPI_T_SCOPE_ALL_EQ;
}

static int is_class(int c) {
    return c == MPI_T_PVAR_CLASS_STATE || c == MPI_T_PVAR_CLASS_LEVEL ||
           c == MPI_T_PVAR_CLASS_SIZE || c == MPI_T_PVAR_CLASS_PERCENTAGE ||
           c == MPI_T_PVAR_CLASS_HIGHWATERMARK || c == MPI_T_PVAR_CLASS_LOWWATERMARK ||
           c == MPI_T_PVAR_CLASS_COUNTER || c == MPI_T_PVAR_CLASS_AGGREGATE ||
           c == MPI_T_PVAR_CLASS_TIMER || c == MPI_T_PVAR_CLASS_GENERIC;
}

/* The string rules of section 14.3.3, on a name of known length (len, with
 * its terminating zero) returned by query(index, buf, &len). */
typedef int (*NameQuery)(int index, char* buf, int* len);

static int cvar_name(int i, char* b, int* l) {
    return MPI_T_cvar_get_info(i, b, l, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}
static int cvar_desc(int i, char* b, int* l) {
    return MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, NULL, b, l, NULL, NULL);
}
static int pvar_name(int i, char* b, int* l) {
    return MPI_T_pvar_get_info(i, b, l, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}
static int category_name(int i, char* b, int* l) {
    return MPI_T_category_get_info(i, b, l, NULL, NULL, NULL, NULL, NULL);
}

static void check_strings(NameQuery q, int index, const char* full, const char* what) {
    const int n = (int)strlen(full) + 1;
    int len = 0;
    T_OK(q(index, NULL, &len));
    CHECK(len == n, "%s %d: length %d with a NULL buffer, expected %d", what, index, len, n);
    char buf[8];
    memset(buf, '#', sizeof(buf));
    len = 0;
    T_OK(q(index, buf, &len));
    CHECK(len == n && buf[0] == '#', "%s %d: length 0 wrote into the buffer or gave %d", what,
          index, len);
    len = 3;
    T_OK(q(index, buf, &len));
    CHECK(len == n, "%s %d: a 3-byte buffer gave length %d, expected %d", what, index, len, n);
    CHECK(strlen(buf) == (size_t)(n > 3 ? 2 : n - 1) && strncmp(buf, full, strlen(buf)) == 0,
          "%s %d: truncated to '%s' (full: '%s')", what, index, buf, full);
    T_OK(q(index, NULL, NULL)); /* no length: nothing returned, no crash */
}

static void check_enum(MPI_T_enum e, const char* var) {
    int num = -1, len = 256;
    char name[256];
    T_OK(MPI_T_enum_get_info(e, &num, name, &len));
    CHECK(num > 0 && len == (int)strlen(name) + 1, "%s: enumeration %s has %d items", var, name,
          num);
    for (int k = 0; k < num; ++k) {
        int value = -1, ilen = 256;
        char item[256];
        T_OK(MPI_T_enum_get_item(e, k, &value, item, &ilen));
        CHECK(ilen == (int)strlen(item) + 1 && ilen > 1, "%s: item %d has no name", var, k);
    }
}

/* Every control variable; returns their count. */
static int check_cvars(void) {
    int num = -1;
    T_OK(MPI_T_cvar_get_num(&num));
    CHECK(num >= 20, "only %d control variables", num);
    for (int i = 0; i < num; ++i) {
        char name[256], desc[1024];
        int name_len = sizeof(name), desc_len = sizeof(desc), verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum e;
        T_OK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &e, desc, &desc_len, &bind,
                                 &scope));
        CHECK(name_len == (int)strlen(name) + 1 && name_len > 1, "cvar %d: name length", i);
        CHECK(desc_len == (int)strlen(desc) + 1 && desc_len > 1, "cvar %s: no description", name);
        CHECK(strncmp(name, "MPC_", 4) == 0, "cvar %s is not an MPC_* setting", name);
        CHECK(is_verbosity(verbosity) && is_type(type) && is_bind(bind) && is_scope(scope),
              "cvar %s: verbosity %d, type 0x%x, bind %d, scope %d", name, verbosity, type, bind,
              scope);
        CHECK(e == MPI_T_ENUM_NULL || type == MPI_INT, "cvar %s: an enumeration on a non-int",
              name);
        if (e != MPI_T_ENUM_NULL) check_enum(e, name);
        check_strings(cvar_name, i, name, "cvar name");
        check_strings(cvar_desc, i, desc, "cvar description");
        /* NULL for every output. */
        T_OK(MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        int index = -1;
        T_OK(MPI_T_cvar_get_index(name, &index));
        CHECK(index == i, "cvar %s: get_index gave %d, not %d (names must be unique)", name, index,
              i);
        /* Read it. */
        MPI_Comm comm = MPI_COMM_WORLD;
        MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
        int count = -1;
        T_OK(MPI_T_cvar_handle_alloc(i, bind == MPI_T_BIND_NO_OBJECT ? NULL : &comm, &h, &count));
        CHECK(h != MPI_T_CVAR_HANDLE_NULL && count >= 1, "cvar %s: count %d", name, count);
        unsigned char* value = (unsigned char*)xmalloc((size_t)count * type_size(type) + 16);
        memset(value, 0xab, (size_t)count * type_size(type) + 16);
        T_OK(MPI_T_cvar_read(h, value));
        CHECK_GUARD(value + (size_t)count * type_size(type), 16, 0xab, name);
        if (type == MPI_CHAR)
            CHECK(value[count - 1] == 0 && strlen((char*)value) == (size_t)count - 1,
                  "cvar %s: string of %zu characters in %d", name, strlen((char*)value), count);
        if (e != MPI_T_ENUM_NULL) {
            /* The value is one of its enumeration's. */
            int num_items = 0, found = 0, v = *(int*)value;
            T_OK(MPI_T_enum_get_info(e, &num_items, NULL, NULL));
            for (int k = 0; k < num_items; ++k) {
                int item = 0;
                T_OK(MPI_T_enum_get_item(e, k, &item, NULL, NULL));
                found |= item == v;
            }
            CHECK(found, "cvar %s = %d is none of its enumeration's values", name, v);
        }
        free(value);
        T_OK(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "cvar_handle_free left the handle set");
    }
    return num;
}

/* Every performance variable; returns their count. */
static int check_pvars(void) {
    int num = -1;
    T_OK(MPI_T_pvar_get_num(&num));
    CHECK(num >= 40, "only %d performance variables", num);
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < num; ++i) {
        char name[256], desc[1024];
        int name_len = sizeof(name), desc_len = sizeof(desc), verbosity, cls, bind, ro, cont, at;
        MPI_Datatype type;
        MPI_T_enum e;
        T_OK(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &type, &e, desc, &desc_len,
                                 &bind, &ro, &cont, &at));
        CHECK(
            name_len == (int)strlen(name) + 1 && desc_len == (int)strlen(desc) + 1 && desc_len > 1,
            "pvar %d (%s): string lengths", i, name);
        CHECK(is_verbosity(verbosity) && is_class(cls) && is_type(type) && type != MPI_CHAR &&
                  is_bind(bind),
              "pvar %s: verbosity %d, class %d, type 0x%x, bind %d", name, verbosity, cls, type,
              bind);
        CHECK((ro == 0 || ro == 1) && (cont == 0 || cont == 1) && (at == 0 || at == 1),
              "pvar %s: flags %d %d %d", name, ro, cont, at);
        CHECK(!at || !ro, "pvar %s: atomic read-and-reset of a read-only variable", name);
        /* Classes and types (14.3.7): timers and percentages may be doubles, counters not. */
        if (cls == MPI_T_PVAR_CLASS_COUNTER)
            CHECK(
                type == MPI_UNSIGNED || type == MPI_UNSIGNED_LONG || type == MPI_UNSIGNED_LONG_LONG,
                "counter %s of type 0x%x", name, type);
        if (cls == MPI_T_PVAR_CLASS_PERCENTAGE) CHECK(type == MPI_DOUBLE, "percentage %s", name);
        CHECK(e == MPI_T_ENUM_NULL || type == MPI_INT, "pvar %s: enumeration", name);
        check_strings(pvar_name, i, name, "pvar name");
        T_OK(MPI_T_pvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                 NULL, NULL));
        int index = -1;
        T_OK(MPI_T_pvar_get_index(name, cls, &index));
        CHECK(index == i, "pvar %s: get_index gave %d, not %d", name, index, i);
        /* A handle, read (continuous variables start at once; a counter starts at 0). */
        MPI_Comm comm = MPI_COMM_WORLD;
        MPI_T_pvar_handle h;
        int count = -1;
        T_OK(
            MPI_T_pvar_handle_alloc(s, i, bind == MPI_T_BIND_NO_OBJECT ? NULL : &comm, &h, &count));
        CHECK(count >= 1, "pvar %s: count %d", name, count);
        unsigned char* value = (unsigned char*)xmalloc((size_t)count * type_size(type) + 16);
        memset(value, 0xab, (size_t)count * type_size(type) + 16);
        T_OK(MPI_T_pvar_read(s, h, value));
        CHECK_GUARD(value + (size_t)count * type_size(type), 16, 0xab, name);
        if (!cont && (cls == MPI_T_PVAR_CLASS_COUNTER || cls == MPI_T_PVAR_CLASS_TIMER)) {
            unsigned long long zero = 0;
            CHECK(memcmp(value, &zero, type_size(type)) == 0,
                  "pvar %s: not started, yet not at its starting value", name);
        }
        free(value);
        if (!cont) {
            T_OK(MPI_T_pvar_start(s, h));
            T_OK(MPI_T_pvar_stop(s, h));
        }
        T_OK(MPI_T_pvar_handle_free(s, &h));
        CHECK(h == MPI_T_PVAR_HANDLE_NULL, "pvar_handle_free left the handle set");
    }
    T_OK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session_free left the session set");
    return num;
}

static void check_categories(int num_cvars, int num_pvars) {
    int num = -1, stamp1 = -1, stamp2 = -2;
    T_OK(MPI_T_category_changed(&stamp1));
    T_OK(MPI_T_category_get_num(&num));
    CHECK(num >= 4, "only %d categories", num);
    char* cvar_seen = (char*)calloc((size_t)num_cvars + 1, 1);
    char* pvar_seen = (char*)calloc((size_t)num_pvars + 1, 1);
    for (int c = 0; c < num; ++c) {
        char name[256], desc[1024];
        int name_len = sizeof(name), desc_len = sizeof(desc), nc = -1, np = -1, ncat = -1;
        T_OK(MPI_T_category_get_info(c, name, &name_len, desc, &desc_len, &nc, &np, &ncat));
        CHECK(name_len == (int)strlen(name) + 1 && desc_len == (int)strlen(desc) + 1 && nc >= 0 &&
                  np >= 0 && ncat >= 0,
              "category %d (%s)", c, name);
        check_strings(category_name, c, name, "category name");
        int index = -1;
        T_OK(MPI_T_category_get_index(name, &index));
        CHECK(index == c, "category %s: get_index gave %d", name, index);
        int* list = ints((size_t)(nc + np + ncat + 1), -7);
        T_OK(MPI_T_category_get_cvars(c, nc, list));
        for (int k = 0; k < nc; ++k) {
            CHECK(list[k] >= 0 && list[k] < num_cvars, "category %s: cvar %d", name, list[k]);
            cvar_seen[list[k]] = 1;
        }
        T_OK(MPI_T_category_get_pvars(c, np, list));
        for (int k = 0; k < np; ++k) {
            CHECK(list[k] >= 0 && list[k] < num_pvars, "category %s: pvar %d", name, list[k]);
            pvar_seen[list[k]] = 1;
        }
        T_OK(MPI_T_category_get_categories(c, ncat, list));
        for (int k = 0; k < ncat; ++k)
            CHECK(list[k] >= 0 && list[k] < num && list[k] != c, "category %s: sub %d", name,
                  list[k]);
        /* Fewer than there are: only those, the rest untouched. */
        if (np > 1) {
            list[1] = -7;
            T_OK(MPI_T_category_get_pvars(c, 1, list));
            CHECK(list[1] == -7, "category %s: wrote past len", name);
        }
        T_OK(MPI_T_category_get_pvars(c, 0, NULL));
        free(list);
    }
    for (int i = 0; i < num_cvars; ++i) CHECK(cvar_seen[i], "cvar %d is in no category", i);
    for (int i = 0; i < num_pvars; ++i) CHECK(pvar_seen[i], "pvar %d is in no category", i);
    free(cvar_seen);
    free(pvar_seen);
    T_OK(MPI_T_category_changed(&stamp2));
    CHECK(stamp1 == stamp2, "the category stamp changed (%d -> %d) with nothing added", stamp1,
          stamp2);
}

static void enumerate_all(const char* when) {
    const int nc = check_cvars();
    const int np = check_pvars();
    check_categories(nc, np);
    (void)when;
}

int main(int argc, char** argv) {
    /* Before MPI_Init: the interface counts its initialisations. */
    int provided = -1;
    T_ERR(MPI_T_cvar_get_num(&provided), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d",
          provided);
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_T gives MPI_THREAD_MULTIPLE: %d", provided);
    enumerate_all("before MPI_Init");
    T_OK(MPI_T_finalize());
    int n = -1;
    T_OK(MPI_T_cvar_get_num(&n)); /* still initialized once */

    MPI_OK(MPI_Init(&argc, &argv));
    int size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    enumerate_all("while MPI runs");
    CHECK(t_cvar_int("MPC_NRANKS") == size, "MPC_NRANKS is %d, the world %d",
          t_cvar_int("MPC_NRANKS"), size);
    {
        /* MPC_INTRA_EAGER: the default unless the environment sets it. */
        MPI_T_cvar_handle h;
        int count;
        unsigned long eager = 0;
        T_OK(MPI_T_cvar_handle_alloc(t_cvar("MPC_INTRA_EAGER"), NULL, &h, &count));
        T_OK(MPI_T_cvar_read(h, &eager));
        const char* env = getenv("MPC_INTRA_EAGER");
        CHECK(env || eager == 16384, "MPC_INTRA_EAGER reads %lu", eager);
        T_OK(MPI_T_cvar_handle_free(&h));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());

    /* After MPI_Finalize: still usable, then finalized for good. */
    enumerate_all("after MPI_Finalize");
    T_OK(MPI_T_finalize());
    T_ERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    /* And initialized again. */
    T_OK(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided));
    T_OK(MPI_T_cvar_get_num(&n));
    T_OK(MPI_T_finalize());
    return 0;
}
