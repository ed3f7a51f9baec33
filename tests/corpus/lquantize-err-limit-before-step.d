/* dtrace-utils compares base and limit before it checks the step. */
BEGIN
{
	@ = lquantize(0, 1100, 1100, -100);
}
