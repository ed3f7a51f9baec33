#pragma D option errtags
/* dt_cook_op1/op2: the operator that needs the lvalue is named. */
BEGIN
{
	$pid++;
}
