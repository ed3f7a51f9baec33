/* DTrace checks a predicate once its clause is read: the error names
   the line of the clause's end (predicates/err.D_PRED_SCALAR.NonScalarPred). */
int a[4];

BEGIN
/a/
{
	exit(0);
}
