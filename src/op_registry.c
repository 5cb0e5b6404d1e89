/* The operator classes users can name in a chain. */
#include <stddef.h>
#include "op.h"

const vkcu_op_class *const vkcu_op_classes[] = {
    NULL,
};
