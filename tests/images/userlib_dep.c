/* libud: a user library needed by another one (its short name makes the
 * runtime redirect it through RUNPATH rather than by path). */
#include "userlib.h"

int dep_value = 10;

int dep_bump(int by) {
    return __atomic_add_fetch(&dep_value, by, __ATOMIC_RELAXED);
}
