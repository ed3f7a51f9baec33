BEGIN
{
	printf("%d %d %d %d %d %d %d %d\n", (int8_t)200, (uint8_t)-1, (int16_t)40000, (uint16_t)-1, (int32_t)3000000000, (uint32_t)-1, (int64_t)-1, (uint64_t)-1);
	exit(0);
}
