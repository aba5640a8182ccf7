/* The large-count (_c) datatype constructors, queries and pack functions of
 * MPI 4.0 with small arguments: each type must equal the one its int
 * constructor makes (size, bounds, and the bytes MPI_Pack takes from a
 * buffer), and its envelope and contents must hold the arguments as large
 * counts (MPI 4.0 section 5.1.13), which the int MPI_Type_get_envelope and
 * _contents refuse (MPI_ERR_TYPE). Pack_c/Unpack_c/Pack_size_c and the
 * external32 forms must give what the int forms give. Local calls only.
 */
#include "common.h"

#define SRC 4096 /* doubles in the source buffer the types describe */

static double src[SRC];

/* a (int constructor) and b (_c constructor) describe the same data. */
static void same_type(MPI_Datatype a, MPI_Datatype b, const char* what) {
    MPI_Count sa, sb, lba, lbb, exa, exb, tla, tlb, tea, teb;
    MPI_OK(MPI_Type_size_c(a, &sa));
    MPI_OK(MPI_Type_size_c(b, &sb));
    MPI_OK(MPI_Type_get_extent_c(a, &lba, &exa));
    MPI_OK(MPI_Type_get_extent_c(b, &lbb, &exb));
    MPI_OK(MPI_Type_get_true_extent_c(a, &tla, &tea));
    MPI_OK(MPI_Type_get_true_extent_c(b, &tlb, &teb));
    CHECK(sa == sb && lba == lbb && exa == exb && tla == tlb && tea == teb,
          "%s: size %lld/%lld lb %lld/%lld extent %lld/%lld true %lld+%lld / %lld+%lld", what,
          (long long)sa, (long long)sb, (long long)lba, (long long)lbb, (long long)exa,
          (long long)exb, (long long)tla, (long long)tea, (long long)tlb, (long long)teb);
    int isize;
    MPI_Aint lb, ex;
    MPI_OK(MPI_Type_size(b, &isize));
    MPI_OK(MPI_Type_get_extent(b, &lb, &ex));
    CHECK(isize == sa && lb == lba && ex == exa, "%s: int queries differ", what);
    /* The bytes each takes from src: int Pack of a, Pack_c of b. */
    MPI_Type_commit(&a);
    MPI_Type_commit(&b);
    int psize;
    MPI_Count psize_c;
    MPI_OK(MPI_Pack_size(1, a, MPI_COMM_WORLD, &psize));
    MPI_OK(MPI_Pack_size_c(1, b, MPI_COMM_WORLD, &psize_c));
    CHECK(psize == psize_c, "%s: Pack_size %d, Pack_size_c %lld", what, psize, (long long)psize_c);
    char* pa = (char*)xmalloc((size_t)psize + 1);
    char* pb = (char*)xmalloc((size_t)psize + 1);
    int pos = 0;
    MPI_Count pos_c = 0;
    MPI_OK(MPI_Pack(src, 1, a, pa, psize, &pos, MPI_COMM_WORLD));
    MPI_OK(MPI_Pack_c(src, 1, b, pb, psize_c, &pos_c, MPI_COMM_WORLD));
    CHECK(pos == pos_c && memcmp(pa, pb, (size_t)pos) == 0, "%s: packed data differ", what);
    /* Unpack_c puts it back where the int Unpack does. */
    static double ua[SRC], ub[SRC];
    memset(ua, 0, sizeof ua);
    memset(ub, 0, sizeof ub);
    pos = 0;
    pos_c = 0;
    MPI_OK(MPI_Unpack(pa, psize, &pos, ua, 1, a, MPI_COMM_WORLD));
    MPI_OK(MPI_Unpack_c(pb, psize_c, &pos_c, ub, 1, b, MPI_COMM_WORLD));
    CHECK(memcmp(ua, ub, sizeof ua) == 0, "%s: unpacked data differ", what);
    free(pa);
    free(pb);
}

/* b's envelope and contents: combiner, ints, large counts, datatypes. */
static void contents(MPI_Datatype b, int combiner, const int* ints, int ni, const MPI_Count* lc,
                     int nl, int nd, const char* what) {
    MPI_Count cni, cna, cnl, cnd;
    int comb, i1, i2, i3, i4;
    MPI_OK(MPI_Type_get_envelope_c(b, &cni, &cna, &cnl, &cnd, &comb));
    CHECK(comb == combiner && cni == ni && cna == 0 && cnl == nl && cnd == nd,
          "%s: envelope_c combiner %d ni %lld na %lld nl %lld nd %lld", what, comb,
          (long long)cni, (long long)cna, (long long)cnl, (long long)cnd);
    CHECK(error_class(MPI_Type_get_envelope(b, &i1, &i2, &i3, &i4)) == MPI_ERR_TYPE,
          "%s: the int MPI_Type_get_envelope did not refuse a large-count type", what);
    int gi[16];
    MPI_Aint ga[1];
    MPI_Count gl[16];
    MPI_Datatype gd[4];
    MPI_OK(MPI_Type_get_contents_c(b, 16, 1, 16, 4, gi, ga, gl, gd));
    for (int k = 0; k < ni; ++k) CHECK(gi[k] == ints[k], "%s: integer %d is %d", what, k, gi[k]);
    for (int k = 0; k < nl; ++k)
        CHECK(gl[k] == lc[k], "%s: large count %d is %lld, expected %lld", what, k,
              (long long)gl[k], (long long)lc[k]);
    for (int k = 0; k < nd; ++k) {
        int n, na, ndt, c;
        MPI_OK(MPI_Type_get_envelope(gd[k], &n, &na, &ndt, &c));
        if (c != MPI_COMBINER_NAMED) MPI_OK(MPI_Type_free(&gd[k]));
    }
}

static void constructors(void) {
    MPI_Datatype a, b;
    MPI_OK(MPI_Type_contiguous(5, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_contiguous_c(5, MPI_DOUBLE, &b));
    same_type(a, b, "contiguous");
    contents(b, MPI_COMBINER_CONTIGUOUS, NULL, 0, (MPI_Count[]){5}, 1, 1, "contiguous_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    MPI_OK(MPI_Type_vector(4, 3, 7, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_vector_c(4, 3, 7, MPI_DOUBLE, &b));
    same_type(a, b, "vector");
    contents(b, MPI_COMBINER_VECTOR, NULL, 0, (MPI_Count[]){4, 3, 7}, 3, 1, "vector_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    MPI_OK(MPI_Type_create_hvector(4, 3, 72, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_create_hvector_c(4, 3, 72, MPI_DOUBLE, &b));
    same_type(a, b, "hvector");
    contents(b, MPI_COMBINER_HVECTOR, NULL, 0, (MPI_Count[]){4, 3, 72}, 3, 1, "hvector_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    int bl[3] = {2, 1, 4}, di[3] = {0, 5, 9};
    MPI_Aint da[3] = {8, 64, 200};
    MPI_Count blc[3] = {2, 1, 4}, dic[3] = {0, 5, 9}, dac[3] = {8, 64, 200};
    MPI_OK(MPI_Type_indexed(3, bl, di, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_indexed_c(3, blc, dic, MPI_DOUBLE, &b));
    same_type(a, b, "indexed");
    contents(b, MPI_COMBINER_INDEXED, NULL, 0, (MPI_Count[]){3, 2, 1, 4, 0, 5, 9}, 7, 1,
             "indexed_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    MPI_OK(MPI_Type_create_hindexed(3, bl, da, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_create_hindexed_c(3, blc, dac, MPI_DOUBLE, &b));
    same_type(a, b, "hindexed");
    contents(b, MPI_COMBINER_HINDEXED, NULL, 0, (MPI_Count[]){3, 2, 1, 4, 8, 64, 200}, 7, 1,
             "hindexed_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    MPI_OK(MPI_Type_create_indexed_block(3, 2, di, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_create_indexed_block_c(3, 2, dic, MPI_DOUBLE, &b));
    same_type(a, b, "indexed_block");
    contents(b, MPI_COMBINER_INDEXED_BLOCK, NULL, 0, (MPI_Count[]){3, 2, 0, 5, 9}, 5, 1,
             "indexed_block_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    MPI_OK(MPI_Type_create_hindexed_block(3, 2, da, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_create_hindexed_block_c(3, 2, dac, MPI_DOUBLE, &b));
    same_type(a, b, "hindexed_block");
    contents(b, MPI_COMBINER_HINDEXED_BLOCK, NULL, 0, (MPI_Count[]){3, 2, 8, 64, 200}, 5, 1,
             "hindexed_block_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
    int sbl[2] = {3, 2};
    MPI_Aint sd[2] = {0, 40};
    MPI_Count sblc[2] = {3, 2}, sdc[2] = {0, 40};
    MPI_OK(MPI_Type_create_struct(2, sbl, sd, types, &a));
    MPI_OK(MPI_Type_create_struct_c(2, sblc, sdc, types, &b));
    same_type(a, b, "struct");
    contents(b, MPI_COMBINER_STRUCT, NULL, 0, (MPI_Count[]){2, 3, 2, 0, 40}, 5, 2, "struct_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    MPI_OK(MPI_Type_create_resized(MPI_DOUBLE, -8, 32, &a));
    MPI_OK(MPI_Type_create_resized_c(MPI_DOUBLE, -8, 32, &b));
    same_type(a, b, "resized");
    contents(b, MPI_COMBINER_RESIZED, NULL, 0, (MPI_Count[]){-8, 32}, 2, 1, "resized_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    int sz[2] = {10, 12}, sub[2] = {4, 5}, st[2] = {3, 2};
    MPI_Count szc[2] = {10, 12}, subc[2] = {4, 5}, stc[2] = {3, 2};
    MPI_OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_create_subarray_c(2, szc, subc, stc, MPI_ORDER_C, MPI_DOUBLE, &b));
    same_type(a, b, "subarray");
    contents(b, MPI_COMBINER_SUBARRAY, (int[]){2, MPI_ORDER_C}, 2,
             (MPI_Count[]){10, 12, 4, 5, 3, 2}, 6, 1, "subarray_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    int gs[2] = {9, 10}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 3};
    MPI_Count gsc[2] = {9, 10};
    MPI_OK(MPI_Type_create_darray(6, 4, 2, gs, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_create_darray_c(6, 4, 2, gsc, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_DOUBLE,
                                    &b));
    same_type(a, b, "darray");
    contents(b, MPI_COMBINER_DARRAY,
             (int[]){6, 4, 2, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
                     MPI_DISTRIBUTE_DFLT_DARG, 2, 2, 3, MPI_ORDER_FORTRAN},
             10, (MPI_Count[]){9, 10}, 2, 1, "darray_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    /* An int constructor's type: envelope_c lists no large counts. */
    MPI_Count ni, na, nl, nd;
    int comb;
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &a));
    MPI_OK(MPI_Type_get_envelope_c(a, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nl == 0 && nd == 1,
          "envelope_c of an int vector: %lld %lld %lld %lld", (long long)ni, (long long)na,
          (long long)nl, (long long)nd);
    int gi[3];
    MPI_Datatype gd;
    MPI_OK(MPI_Type_get_contents_c(a, 3, 0, 0, 1, gi, NULL, NULL, &gd));
    CHECK(gi[0] == 2 && gi[1] == 1 && gi[2] == 3 && gd == MPI_INT, "contents_c of an int vector");
    MPI_Type_free(&a);
}

static void external(void) {
    int v[7] = {1, -2, 3, 1 << 20, -5, 6, 7}, back[7] = {0};
    MPI_Aint size;
    MPI_Count size_c;
    MPI_OK(MPI_Pack_external_size("external32", 7, MPI_INT, &size));
    MPI_OK(MPI_Pack_external_size_c("external32", 7, MPI_INT, &size_c));
    CHECK(size == 28 && size_c == 28, "external32 sizes %ld, %lld", (long)size,
          (long long)size_c);
    char a[28], b[28];
    MPI_Aint pos = 0;
    MPI_Count pos_c = 0;
    MPI_OK(MPI_Pack_external("external32", v, 7, MPI_INT, a, 28, &pos));
    MPI_OK(MPI_Pack_external_c("external32", v, 7, MPI_INT, b, 28, &pos_c));
    CHECK(pos == 28 && pos_c == 28 && memcmp(a, b, 28) == 0, "Pack_external_c differs");
    pos_c = 0;
    MPI_OK(MPI_Unpack_external_c("external32", b, 28, &pos_c, back, 7, MPI_INT));
    CHECK(pos_c == 28 && memcmp(v, back, sizeof v) == 0, "Unpack_external_c differs");
    /* A buffer too small: MPI_ERR_TRUNCATE, as the int form. */
    pos_c = 0;
    CHECK(error_class(MPI_Pack_c(v, 7, MPI_INT, b, 27, &pos_c, MPI_COMM_WORLD)) ==
              MPI_ERR_TRUNCATE,
          "MPI_Pack_c into too small a buffer is not MPI_ERR_TRUNCATE");
    CHECK(error_class(MPI_Pack_size_c(-1, MPI_INT, MPI_COMM_WORLD, &size_c)) == MPI_ERR_COUNT,
          "MPI_Pack_size_c(-1) is not MPI_ERR_COUNT");
    /* More than an int: Pack_size_c tells, Pack_size cannot. */
    int isize;
    MPI_OK(MPI_Pack_size_c((MPI_Count)1 << 31, MPI_INT, MPI_COMM_WORLD, &size_c));
    CHECK(size_c == (MPI_Count)1 << 33, "Pack_size_c(2^31 ints) = %lld", (long long)size_c);
    CHECK(error_class(MPI_Pack_size(1 << 30, MPI_INT, MPI_COMM_WORLD, &isize)) == MPI_ERR_COUNT,
          "MPI_Pack_size of 2^32 bytes is not MPI_ERR_COUNT");
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int i = 0; i < SRC; ++i) src[i] = i * 1.5 + 0.25;
    constructors();
    external();
    MPI_Finalize();
    return 0;
}
