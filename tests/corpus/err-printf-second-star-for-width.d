#pragma D option errtags
/* A second `*` for the width names the width (err.D_SYNTAX.double_width). */
BEGIN
{
	printf("%**d");
	exit(0);
}
