/* egress-guardctl receipt show: a receipt's grade as a person reads it
 * (docs/receipts.md "Reading a grade"). */
#ifndef EG_CTL_RECEIPTSHOW_H
#define EG_CTL_RECEIPTSHOW_H

/* receipt show RECEIPT [--attesters DIR]; argv[0] is "show". Prints, per
 * fact, the cases its suite requires, which pass, each control's
 * evidence and what is missing. Exit 0 when printed, 2 for a malformed
 * receipt or usage, 1 when output fails. */
int receiptshow_cmd(int argc, char **argv);

#endif
