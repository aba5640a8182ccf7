/* Configure-time probe: does `clang -fopenmp` compile and link (LLVM's libomp
 * installed)? Not a test. */
#include <omp.h>

int main(void) { return omp_get_max_threads() < 1; }
