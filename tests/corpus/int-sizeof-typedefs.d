BEGIN
{
	printf("%d %d %d %d %d %d\n", sizeof (uint8_t), sizeof (int16_t), sizeof (uint32_t), sizeof (int64_t), sizeof (uintptr_t), sizeof (size_t));
	exit(0);
}
