BEGIN
{
	printf("%d %d %d %d %d %d\n", (long)(char)-1, (unsigned long)(char)-1, (long)(unsigned char)-1, (int64_t)(int32_t)0x80000000, (uint64_t)(uint32_t)-1, (long)(short)-2);
	exit(0);
}
