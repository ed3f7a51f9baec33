/* Reading an associative array no statement has assigned creates it (of int). */
BEGIN
{
	printf("%d %d\n", never["x"], self->nor[1, 2]);
	exit(0);
}
