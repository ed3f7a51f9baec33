BEGIN
{
	w = 4;
	printf("[%*d][%-*d]\n", w, 7, w + 2, 7);
	exit(0);
}
