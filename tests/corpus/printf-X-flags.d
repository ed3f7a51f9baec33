BEGIN
{
	printf("[%X][%#X][%08X]\n", 0xabcdef, 0xabcdef, 0xabcdef);
	exit(0);
}
