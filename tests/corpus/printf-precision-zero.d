BEGIN
{
	/* dt_printf_format only emits a precision greater than 0 */
	printf("[%.0d][%.0s][%.2d]\n", 0, "abc", 123);
	exit(0);
}
