#pragma D option errtags
/*
 * A format that is no string constant: dt_action_printflike's prototype
 * error, naming the argument's type (actions/printf/err.D_PRINTF_ARG_FMT).
 */
BEGIN
{
	printf(probename);
}
